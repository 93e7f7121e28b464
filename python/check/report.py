# dlmap conformance checker — a check's result: rows (an id, what was sent, what came back, and per column the
# violations found, or skipped with the reason), the rules they cite, and the Markdown table the CLI prints and
# docs/conformance/ commits; for CI systems the same rows as JSON (--json) and as JUnit XML (--junit).
import shlex
import xml.etree.ElementTree as ElementTree

# The JSON document's format, bumped when a field changes meaning or goes away (fields may be added).
JSON_FORMAT = "dlmap.check/1"


class Row:
    def __init__(self, row_id, sent, got, verdicts, skipped=False):
        self.id, self.sent, self.got = row_id, sent, got
        self.verdicts = verdicts  # column → [(rule id, detail), …]; empty: the row passes in that column
        # A row whose check could not run here (no GPU runtime, no device): `got` says why; it neither passes nor
        # fails, and is counted apart so that a skip is never read as a pass.
        self.skipped = skipped

    def passed(self, column):
        return not self.verdicts[column]


class Report:
    """Rows of one check. `columns` name the verdicts: "standard" (the DLPack / Array API standard, as the spec and
    its array_api profile say it) and, when asked, "<name> profile" (what that profile of dlmap promises)."""

    def __init__(self, title, subject, columns, rules, notes=()):
        self.title, self.subject, self.columns, self.rules = title, subject, list(columns), rules
        self.notes = list(notes)
        self.rows = []
        self.device = None  # a producer check's (device type, id) as the producer reported it, when it did

    def add(self, row):
        self.rows.append(row)

    def counts(self, column):
        """(rows that pass, rows that fail) in the column; skipped rows are neither."""
        failed = sum(1 for r in self.rows if not r.passed(column))
        return len(self.rows) - failed - self.skipped(), failed

    def skipped(self):
        return sum(1 for r in self.rows if r.skipped)

    def passed(self, column=None):
        return all(r.passed(c) for r in self.rows for c in ([column] if column else self.columns))

    def markdown(self):
        out = ["### %s: `%s`" % (self.title, self.subject), ""]
        out += [note for note in self.notes] + ([""] if self.notes else [])
        out.append(", ".join("%s: %d rows pass, %d fail" % ((c,) + self.counts(c)) for c in self.columns) +
                   ("; %d skipped" % self.skipped() if self.skipped() else "") + ".")
        out.append("")
        out.append("| id | sent | came back | " + " | ".join(self.columns) + " |")
        out.append("|---|---|---|" + "---|" * len(self.columns))
        for row in self.rows:
            cells = [row.id, row.sent, row.got] + ["skipped" if row.skipped else _verdict(row.verdicts[c])
                                                   for c in self.columns]
            out.append("| " + " | ".join(_cell(x) for x in cells) + " |")
        cited = sorted({rule for row in self.rows for c in self.columns for rule, _ in row.verdicts[c]})
        if cited:
            out += ["", "Rules broken above:", ""]
            out += ["- `%s`: %s" % (rule, self.rules[rule]) for rule in cited]
        return "\n".join(out) + "\n"


    def reproduction(self, row):
        """One shell line that shows what the row saw: for a producer's call, that call on the value, made as the
        check makes it; otherwise the check itself (whose table has the row)."""
        module, _, expression = self.subject.partition(":")
        if self.title == "producer" and expression and str(row.sent).startswith("__dlpack"):
            code = "import %s; x = eval(%r, vars(%s)); print(x.%s)" % (module, expression, module, row.sent)
            return "python3 -c %s" % shlex.quote(code)
        return "python3 -m dlmap.check %s %s  # row %s" % (self.title, shlex.quote(self.subject), row.id)

    def to_json(self):
        """Every row, with what was sent, what came back, the verdict per judge (its violations with the rules'
        text) and a reproduction: a dict for json.dump."""
        def verdict(row, column):
            if row.skipped:
                return {"verdict": "skipped", "violations": []}
            violations = [{"rule": rule, "detail": detail, "text": self.rules.get(rule, "")}
                          for rule, detail in row.verdicts[column]]
            return {"verdict": "fail" if violations else "pass", "violations": violations}
        return {
            "format": JSON_FORMAT,
            "check": self.title,
            "subject": self.subject,
            "device": list(self.device) if self.device else None,
            "notes": self.notes,
            "columns": self.columns,
            "counts": {c: dict(zip(("pass", "fail"), self.counts(c))) for c in self.columns},
            "skipped": self.skipped(),
            "passed": self.passed(),
            "rows": [{"id": row.id, "sent": str(row.sent), "got": str(row.got), "skipped": row.skipped,
                      "verdicts": {c: verdict(row, c) for c in self.columns},
                      "reproduction": self.reproduction(row)} for row in self.rows],
        }

    def junit(self):
        """JUnit XML: one testcase per row (failed in any judge: a failure naming each judge's violations; skipped:
        the reason), which GitHub Actions, GitLab and Jenkins show as tests."""
        failures = sum(1 for r in self.rows if not r.skipped and not all(r.passed(c) for c in self.columns))
        suites = ElementTree.Element("testsuites", name="dlmap.check")
        suite = ElementTree.SubElement(suites, "testsuite", name="%s: %s" % (self.title, self.subject),
                                       tests=str(len(self.rows)), failures=str(failures), errors="0",
                                       skipped=str(self.skipped()))
        for row in self.rows:
            case = ElementTree.SubElement(suite, "testcase", classname="dlmap.check.%s" % self.title,
                                          name="%s %s" % (row.id, row.sent))
            broken = [(c, row.verdicts[c]) for c in self.columns if not row.skipped and not row.passed(c)]
            if row.skipped:
                ElementTree.SubElement(case, "skipped", message=str(row.got))
            elif broken:
                failure = ElementTree.SubElement(case, "failure", type=", ".join(c for c, _ in broken),
                                                 message="; ".join("%s: %s" % (c, _verdict(v)) for c, v in broken))
                failure.text = "\n".join("%s: `%s` %s (%s)" % (c, rule, detail, self.rules.get(rule, ""))
                                          for c, violations in broken for rule, detail in violations)
            ElementTree.SubElement(case, "system-out").text = "sent: %s\ncame back: %s\nreproduce: %s" % (
                row.sent, row.got, self.reproduction(row))
        return ElementTree.tostring(suites, encoding="unicode") + "\n"


def _verdict(violations):
    if not violations:
        return "pass"
    return "**FAIL** " + "; ".join("`%s` %s" % (rule, detail) for rule, detail in violations)


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")
