# dlmap conformance checker — a check's result: rows (an id, what was sent, what came back, and per column the
# violations found, or skipped with the reason), the rules they cite, and the Markdown table the CLI prints and
# docs/conformance/ commits.


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


def _verdict(violations):
    if not violations:
        return "pass"
    return "**FAIL** " + "; ".join("`%s` %s" % (rule, detail) for rule, detail in violations)


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")
