"""pytrec_eval doing what ``gainscope evaluate QRELS RUN -m "nDCG@10 AP RR P@10 R@100"`` does: read a TREC qrels
file and a TREC run file, evaluate ndcg_cut_10, map, recip_rank, P_10 and recall_100, print each mean.

    python bench/pytrec_eval_evaluate.py QRELS RUN

The yardstick of bench/startup.py: a whole process, as a user would run it from the shell.
"""

import sys

import pytrec_eval

MEASURES = ("ndcg_cut_10", "map", "recip_rank", "P_10", "recall_100")


def main() -> None:
    qrels_path, run_path = sys.argv[1:3]
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "P.10",
                                                       "recall.100"}).evaluate(run)
    for measure in MEASURES:
        print(f"{measure}\tall\t{sum(v[measure] for v in per_query.values()) / len(per_query):.4f}")


if __name__ == "__main__":
    main()
