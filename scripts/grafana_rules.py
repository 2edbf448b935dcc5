#!/usr/bin/env python3
"""Writes contrib/grafana/runmon.rules.yml from the Grafana dashboard contrib/grafana/runmon.json: one
Prometheus recording rule per PromQL expression of the dashboard (every panel target, rows' panels
included, and every query variable), so that `promtool check rules` checks the dashboard's PromQL and a test
Prometheus can evaluate each expression. The dashboard's variables take their All value (`$job` -> `.*`),
Grafana's built-ins a fixed one (`$__rate_interval` -> `1m`); an expression with a variable this script
does not know, or a variable query other than label_values(SELECTOR, LABEL) or query_result(EXPR), is an
error rather than a rule that checks something else. label_values(SELECTOR, LABEL) becomes
`count by (LABEL) (SELECTOR)`: the series it reads its values from.

Usage: scripts/grafana_rules.py [--dashboard FILE] [--output FILE]   (defaults: the files above)
Python's standard library only."""
import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DASHBOARD = os.path.join(ROOT, "contrib", "grafana", "runmon.json")
DEFAULT_OUTPUT = os.path.join(ROOT, "contrib", "grafana", "runmon.rules.yml")

# Grafana's built-in variables, at the values the rules evaluate them with (the group's interval is 1m).
BUILT_INS = {
    "__rate_interval": "1m",
    "__interval": "1m",
    "__interval_ms": "60000",
    "__range": "1h",
    "__range_s": "3600",
    "__range_ms": "3600000",
}
# $name, ${name}, ${name:format} and the legacy [[name]].
VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)(?::\w+)?\]\]")
LABEL_VALUES = re.compile(r"^\s*label_values\(\s*(.+?)\s*,\s*([a-zA-Z_]\w*)\s*\)\s*$", re.S)
QUERY_RESULT = re.compile(r"^\s*query_result\(\s*(.+)\s*\)\s*$", re.S)


class DashboardError(Exception):
    pass


def variable_values(dashboard):
    """Each dashboard variable's value in the rules: the All value of a query or custom variable."""
    values = dict(BUILT_INS)
    for variable in dashboard.get("templating", {}).get("list", []):
        name = variable.get("name", "")
        if variable.get("type") in ("query", "custom"):
            if not variable.get("includeAll") or not variable.get("allValue"):
                raise DashboardError(f"variable {name}: without an All value the rules cannot stand for it")
            values[name] = variable["allValue"]
        elif variable.get("type") == "constant":
            values[name] = variable.get("query", "")
    return values


def substitute(expr, values, where):
    def replace(match):
        name = match.group(1) or match.group(2) or match.group(3)
        if name not in values:
            raise DashboardError(f"{where}: unknown variable ${name} in {expr!r}")
        return values[name]
    result = VARIABLE.sub(replace, expr)
    if "$" in result:
        raise DashboardError(f"{where}: a '$' is left in {result!r}")
    return result


def slug(text):
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", text.lower())).strip("_") or "untitled"


def panels_of(panels):
    for panel in panels:
        yield panel
        yield from panels_of(panel.get("panels", []))


def variable_expression(variable):
    query = variable.get("query", "")
    if isinstance(query, dict):
        query = query.get("query", "")
    match = LABEL_VALUES.match(query)
    if match:
        return f"count by ({match.group(2)}) ({match.group(1)})"
    match = QUERY_RESULT.match(query)
    if match:
        return match.group(1)
    raise DashboardError(f"variable {variable.get('name')}: {query!r} is not label_values(SELECTOR, LABEL) "
                         "or query_result(EXPR)")


def rules(dashboard):
    """[(record name, expression, where it comes from)] in the dashboard's order."""
    values = variable_values(dashboard)
    out = []
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        where = f"variable {variable['name']}"
        out.append((f"runmon_dashboard:variable_{slug(variable['name'])}:values",
                    substitute(variable_expression(variable), values, where), where))
    for panel in panels_of(dashboard.get("panels", [])):
        for target in panel.get("targets", []):
            if not target.get("expr"):
                continue
            title = panel.get("title", "")
            where = f"panel {panel.get('id')} ({title!r}) target {target.get('refId')}"
            out.append((f"runmon_dashboard:{slug(title)}:{slug(target.get('refId', ''))}",
                        substitute(target["expr"], values, where), where))
    seen = set()
    for record, _expr, where in out:
        if record in seen:
            raise DashboardError(f"{where}: the rule name {record} is taken (panel titles and refIds must be "
                                 "unique)")
        seen.add(record)
    return out


def render(dashboard, source_name):
    lines = [
        f"# Recording rules of the Grafana dashboard {source_name}: one per PromQL expression of its",
        "# panels and variables, with the variables at their All values and $__rate_interval at 1m. Generated",
        "# by scripts/grafana_rules.py; do not edit by hand. `promtool check rules` checks them.",
        "groups:",
        "  - name: runmon_dashboard",
        "    interval: 1m",
        "    rules:",
    ]
    for record, expr, _where in rules(dashboard):
        lines.append(f"      - record: {record}")
        lines.append(f"        expr: {json.dumps(expr, ensure_ascii=False)}")  # a YAML double-quoted scalar
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dashboard", default=DEFAULT_DASHBOARD)
    parser.add_argument("--output", default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    try:
        with open(args.dashboard, encoding="utf-8") as f:
            dashboard = json.load(f)
        text = render(dashboard, "contrib/grafana/" + os.path.basename(args.dashboard))
    except (OSError, ValueError, DashboardError) as error:
        print(f"grafana_rules: {error}", file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
