"""A :class:`~gainscope.gate.GateReport` as text (what CI logs show), markdown (a pull-request comment), JSON,
or JUnit XML (one test case per check, which CI systems display as passed and failed tests)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from gainscope.errors import UnknownFormatError
from gainscope.gate import Check, GateReport
from gainscope.render.text import markdown_table

__all__ = ["GATE_FORMATS", "render_gate", "render_junit"]

GATE_FORMATS = ("text", "markdown", "json")


def _verdict(report: GateReport) -> str:
    failed = len(report.failures)
    total = len(report.checks)
    against = f" against {report.baseline}" if report.baseline else ""
    if failed:
        return f"gate FAILED: {failed} of {total} checks failed for {report.run}{against}"
    held = "the 1 check holds" if total == 1 else f"all {total} checks hold"
    return f"gate passed: {held} for {report.run}{against}"


def _line(c: Check, width: int) -> str:
    where = f"  ({c.where})" if c.where else ""
    return f"  {'ok  ' if c.passed else 'FAIL'}  {c.text.ljust(width)}  {c.detail}{where}"


def render_gate(report: GateReport, fmt: str = "text") -> str:
    """Render ``report``: failures first, then the checks that held; the comparison settings follow."""
    checks = sorted(report.checks, key=lambda c: c.passed)
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2) + "\n"
    if fmt == "markdown":
        rows = [["✅" if c.passed else "❌", c.kind, f"`{c.text}`", c.detail + (f" ({c.where})" if c.where else "")]
                for c in checks]
        return f"**{_verdict(report)}**\n\n" + markdown_table(["", "kind", "check", "detail"], rows) + "\n"
    if fmt != "text":
        raise UnknownFormatError(f"unknown format {fmt!r}; use one of {', '.join(GATE_FORMATS)}")
    width = max((len(c.text) for c in checks), default=0)
    lines = [_verdict(report), *(_line(c, width) for c in checks)]
    profile = report.results[0].profile if report.results else None
    if profile is not None:
        from gainscope.render.results import profile_pairs

        lines.append("")
        lines += [f"  {k}: {v}" for k, v in profile_pairs(profile)]
    if report.comparison is not None:
        lines.append("")
        lines += [f"  {k}: {v}" for k, v in report.comparison.settings.describe()]
        lines += [f"  pairing: {n}" for n in report.comparison.notes]
    return "\n".join(lines) + "\n"


def render_junit(report: GateReport) -> str:
    """JUnit XML: a ``testsuite`` named ``gainscope gate``, one ``testcase`` per check, ``failure`` on failures."""
    suite = ET.Element("testsuite", name="gainscope gate", tests=str(len(report.checks)),
                       failures=str(len(report.failures)), errors="0", skipped="0")
    for c in report.checks:
        case = ET.SubElement(suite, "testcase", classname=f"gainscope.gate.{c.kind}", name=c.text)
        if c.passed:
            ET.SubElement(case, "system-out").text = c.detail
        else:
            failure = ET.SubElement(case, "failure", message=c.detail, type=f"gate {c.kind} failed")
            failure.text = f"{c.text}: {c.detail}" + (f" ({c.where})" if c.where else "")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
