"""The built-in metrics, one module per family. A family is imported when one of its names is first looked up
(:data:`NAMES`, every name and alias of each family, which a test checks against what the modules register), or
when every metric is listed: ``gainscope evaluate -m "nDCG@10 AP RR P@10 R@100"`` imports three families of the
seven, each of which costs a short command about as much as reading a small run (issue 13 item 28)."""

#: every family's canonical names and aliases, the families in the order in which metrics are listed
NAMES: dict[str, tuple[str, ...]] = {
    "average_precision": ("AP", "MAP", "GMAP", "RR", "MRR", "Bpref", "bpref", "GMBpref", "infAP", "InfAP", "binG"),
    "curves": ("IPrec", "11pt_avg", "IPrecAvg"),
    "graded": ("CG", "DCG", "nDCG", "NDCG", "ndcg", "ERR", "RBP", "RBPResid", "G", "ndcg_rel", "Rndcg"),
    "precision": ("P", "Precision", "R", "Recall", "Success", "Hit", "HitRate", "RelP", "Rprec", "RPrec", "R_prec",
                  "Judged", "Unj"),
    "sets": ("SetP", "SetR", "SetRelP", "SetAP", "SetF", "utility", "Utility", "NumQ", "NumRet", "NumRel",
             "NumRelRet", "NumNonrelJudgedRet"),
    "ratings": ("avgRating", "avgRating100", "editDistanceFromBest", "QuepidV1", "blogNDCG"),
    "session": ("iterR", "iterUR", "iterDupR", "iterGR", "iterCG", "iterDCG", "RG", "DRG", "AvgGain", "RAG", "DRAG",
                "SRE", "SRR", "IterationsForAllGoodResults", "sDCG"),
}

#: the module of every family, in listing order
MODULES = tuple(f"gainscope.metrics.families.{family}" for family in NAMES)

#: a built-in metric's name or alias -> the module of its family
HOMES = {name: f"gainscope.metrics.families.{family}" for family, names in NAMES.items() for name in names}

__all__ = ["HOMES", "MODULES", "NAMES"]
