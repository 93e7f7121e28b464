# dlmap GPU check — a stand-in for re2c, so that gpu/check.sh builds the name lookups on a machine without re2c:
# it reads src/name_lookup.re and turns each `/*!local:re2c ... */` block into plain C over a table of the rules its
# generated *.re.inc files hold, with re2c's meaning (the longest rule that matches at the start wins, the first of
# equal length; '...' is ASCII case-insensitive, "..." exact; `*` and `$` return 0). It knows only the constructs the
# skeleton and the generator use and stops with "install re2c" on anything else. CI (//gpu:re2c_standin_test)
# checks that its C answers every lookup as re2c's does.
"""usage: re2c_standin.py -I INCLUDE_DIR -o OUT.c name_lookup.re"""

import argparse
import re
import sys

RULE = re.compile(r"""^(?P<quote>['"])(?P<text>(?:[^'"\\]|\\.)*)(?P=quote)\s*\{\s*DLMAP_FOUND\((?P<value>.*)\);\s*\}$""")
INCLUDE = re.compile(r'^!include\s+"(?P<file>[^"]+)";$')
FALLBACK = re.compile(r"^[*$]\s*\{\s*return 0;\s*\}$")
# re2c string escapes the generator may write (it escapes quotes and backslashes, and C-escapes the rest).
ESCAPES = {"\\\\": "\\", "\\'": "'", '\\"': '"', "\\n": "\n", "\\t": "\t"}

HELPER = """/* re2c_standin.py: the rules of each matcher as a table, searched as re2c's automaton would match. */
typedef struct dlmap_standin_rule {
  const char *text;
  size_t length;
  int fold; /* ASCII case-insensitive ('...' in re2c) */
  int64_t value;
} dlmap_standin_rule;

static unsigned char dlmap_standin_lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

/* The longest rule matching at cur (the first of equal length): its length and value; 0 when none matches. */
static size_t dlmap_standin_match(const dlmap_standin_rule *rules, size_t count, const char *cur, const char *lim,
                                  int64_t *value) {
  size_t best = 0;
  for (size_t r = 0; r < count; r++) {
    const dlmap_standin_rule *rule = &rules[r];
    if (rule->length <= best || rule->length > (size_t)(lim - cur)) continue;
    size_t i = 0;
    for (; i < rule->length; i++) {
      unsigned char a = (unsigned char)cur[i], b = (unsigned char)rule->text[i];
      if (rule->fold) {
        a = dlmap_standin_lower(a);
        b = dlmap_standin_lower(b);
      }
      if (a != b) break;
    }
    if (i == rule->length) {
      best = rule->length;
      *value = rule->value;
    }
  }
  return best;
}
"""


class Unsupported(Exception):
    pass


def c_string(text):
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0x20 <= ord(ch) < 0x7F:
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def unescape(text):
    return re.sub(r"\\.", lambda m: ESCAPES.get(m.group(), None) or _bad_escape(m.group()), text)


def _bad_escape(escape):
    raise Unsupported("the escape %s in a rule" % escape)


def rules_of(path):
    """[(text, fold, value expression)] of a generated *.re.inc."""
    rules = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            m = RULE.match(line)
            if not m:
                raise Unsupported("%s:%d: a rule other than 'name' { DLMAP_FOUND(value); }: %s" % (path, number, line))
            rules.append((unescape(m.group("text")), m.group("quote") == "'", m.group("value")))
    return rules


def block_code(body, include_dirs, index):
    """The C replacing one /*!local:re2c ... */ block."""
    rules = []
    for line in (l.strip() for l in body.split("\n")):
        if not line:
            continue
        m = INCLUDE.match(line)
        if m:
            for directory in include_dirs:
                try:
                    rules += rules_of("%s/%s" % (directory, m.group("file")))
                    break
                except FileNotFoundError:
                    continue
            else:
                raise Unsupported("cannot find %s in %s" % (m.group("file"), ", ".join(include_dirs)))
        elif not FALLBACK.match(line):
            raise Unsupported("the re2c line %r" % line)
    rows = "".join("      {%s, %d, %d, %s},\n" % (c_string(text), len(text.encode("utf-8")), fold, value)
                   for text, fold, value in rules)
    return ("{\n"
            "    static const dlmap_standin_rule rules%d[] = {\n%s    };\n"
            "    int64_t value = 0;\n"
            "    const size_t length = dlmap_standin_match(rules%d, sizeof rules%d / sizeof rules%d[0], cur, lim, &value);\n"
            "    if (length == 0) return 0;\n"
            "    cur += length;\n"
            "    DLMAP_FOUND(value);\n"
            "  }" % (index, rows, index, index, index))


def translate(text, include_dirs):
    out, pos, index = [], 0, 0
    for m in re.finditer(r"/\*!(re2c|local:re2c)(.*?)\*/", text, re.S):
        out.append(text[pos:m.start()])
        if m.group(1) == "re2c":  # the configuration block: the helper takes its place
            if any(l.strip() and not l.strip().startswith("re2c:") for l in m.group(2).split("\n")):
                raise Unsupported("a /*!re2c block with rules")
            out.append(HELPER)
        else:
            out.append(block_code(m.group(2), include_dirs, index))
            index += 1
        pos = m.end()
    out.append(text[pos:])
    result = "".join(out)
    if "re2c" in re.sub(r"/\*.*?\*/|//[^\n]*", "", result, flags=re.S):
        raise Unsupported("a re2c construct outside the blocks it knows")
    return "/* Generated by gpu/re2c_standin.py from src/name_lookup.re; do not edit. */\n" + result


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-I", dest="include", action="append", default=[])
    parser.add_argument("-o", dest="output", required=True)
    parser.add_argument("source")
    args = parser.parse_args(argv)
    try:
        with open(args.source, encoding="utf-8") as handle:
            code = translate(handle.read(), args.include)
    except (Unsupported, OSError) as error:
        print("re2c_standin.py: %s; install re2c" % error, file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
