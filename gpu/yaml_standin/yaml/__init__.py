# dlmap GPU check — a stand-in for PyYAML, so that gpu/check.sh can run the spec generator (codegen/) on a machine
# whose Python has no PyYAML: only the part of PyYAML's API that codegen/spec.py uses, over a reader for the YAML
# the spec is written in (block mappings and sequences, flow collections, plain scalars over several lines, quoted
# strings, comments). Anything else is an error that says to install PyYAML, never a different reading: CI
# (//gpu:yaml_standin_test) checks that every spec file reads as PyYAML reads it and that the generator's outputs
# are byte-identical. Written for dlmap; it is not PyYAML and shares none of its code.
"""Minimal PyYAML stand-in for dlmap's spec generator: SafeLoader, load, the error classes and Mark."""

import math
import re
import types

__all__ = ["SafeLoader", "load", "safe_load", "YAMLError", "MarkedYAMLError", "Mark"]

STR_TAG = "tag:yaml.org,2002:str"
INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
BOOL_TAG = "tag:yaml.org,2002:bool"
NULL_TAG = "tag:yaml.org,2002:null"
SEQ_TAG = "tag:yaml.org,2002:seq"
MAP_TAG = "tag:yaml.org,2002:map"

UNSUPPORTED = "not supported by dlmap's PyYAML stand-in (gpu/yaml_standin); install PyYAML"


# ---- errors and marks --------------------------------------------------------------------------------------------


class Mark:
    def __init__(self, name, index, line, column, buffer, pointer):
        self.name, self.index, self.line, self.column = name, index, line, column
        self.buffer, self.pointer = buffer, pointer

    def __str__(self):
        return '  in "%s", line %d, column %d' % (self.name, self.line + 1, self.column + 1)


class YAMLError(Exception):
    pass


class MarkedYAMLError(YAMLError):
    def __init__(self, context=None, context_mark=None, problem=None, problem_mark=None, note=None):
        super().__init__(problem)
        self.context, self.context_mark = context, context_mark
        self.problem, self.problem_mark, self.note = problem, problem_mark, note

    def __str__(self):
        parts = [p for p in (self.context, self.problem) if p]
        if self.problem_mark is not None:
            parts.append(str(self.problem_mark))
        return "\n".join(parts)


class ReaderError(YAMLError):
    def __init__(self, name, position, character, encoding, reason):
        super().__init__(reason)
        self.name, self.position, self.character = name, position, character
        self.encoding, self.reason = encoding, reason

    def __str__(self):
        return "unacceptable character #x%04x: %s" % (self.character, self.reason)


class ScannerError(MarkedYAMLError):
    pass


class ConstructorError(MarkedYAMLError):
    pass


# PyYAML's module layout, as far as codegen/spec.py reaches into it.
error = types.SimpleNamespace(YAMLError=YAMLError, MarkedYAMLError=MarkedYAMLError, Mark=Mark)
reader = types.SimpleNamespace(ReaderError=ReaderError)
scanner = types.SimpleNamespace(ScannerError=ScannerError)
constructor = types.SimpleNamespace(ConstructorError=ConstructorError)


class BaseResolver:
    DEFAULT_SCALAR_TAG = STR_TAG
    DEFAULT_SEQUENCE_TAG = SEQ_TAG
    DEFAULT_MAPPING_TAG = MAP_TAG


resolver = types.SimpleNamespace(BaseResolver=BaseResolver)


# ---- nodes -------------------------------------------------------------------------------------------------------


class Node:
    def __init__(self, tag, value, start_mark):
        self.tag, self.value, self.start_mark = tag, value, start_mark


class ScalarNode(Node):
    pass


class SequenceNode(Node):
    pass


class MappingNode(Node):
    pass


# ---- implicit scalar types (YAML 1.1, as PyYAML's SafeLoader resolves plain scalars) ------------------------------

_BOOL = re.compile(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$")
_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
                  r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
                    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_OTHER = re.compile(r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?|<<|=)")  # timestamps, merge keys, values
_NON_PRINTABLE = re.compile("[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]")


def _resolve(value):
    for tag, pattern in ((BOOL_TAG, _BOOL), (INT_TAG, _INT), (FLOAT_TAG, _FLOAT), (NULL_TAG, _NULL)):
        if pattern.match(value):
            return tag
    return STR_TAG


def _to_int(text):
    value = text.replace("_", "")
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        digits, base, result = [int(part) for part in value.split(":")], 1, 0
        for digit in reversed(digits):
            result += digit * base
            base *= 60
        return sign * result
    return sign * int(value)


def _to_float(text):
    value = text.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        parts, base, result = [float(part) for part in value.split(":")], 1, 0.0
        for part in reversed(parts):
            result += part * base
            base *= 60
        return sign * result
    return sign * float(value)


# ---- the reader ----------------------------------------------------------------------------------------------------

_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class _Reader:
    """Reads one document into nodes. Lines are (number, indentation, text without comment)."""

    def __init__(self, text, name):
        self.text, self.name = text, name
        bad = _NON_PRINTABLE.search(text)
        if bad:
            raise ReaderError(name, bad.start(), ord(bad.group()), "utf-8", "special characters are not allowed")
        self.lines = []
        for number, raw in enumerate(text.split("\n")):
            if "\t" in raw[:len(raw) - len(raw.lstrip(" \t"))]:
                self.fail(number, 0, "a tab in indentation")
            body = self._strip_comment(raw, number).rstrip()
            if body.strip():
                self.lines.append((number, len(body) - len(body.lstrip(" ")), body))
        self.pos = 0

    # -- helpers

    def mark(self, line, column):
        return Mark(self.name, 0, line, column, None, None)

    def fail(self, line, column, problem):
        raise ScannerError(None, None, problem, self.mark(line, column))

    def unsupported(self, line, column, what):
        self.fail(line, column, "%s is %s" % (what, UNSUPPORTED))

    def _strip_comment(self, raw, number):
        """The line without its comment: '#' at the start or after a space, outside quotes."""
        quote = None
        i = 0
        while i < len(raw):
            c = raw[i]
            if quote == '"':
                if c == "\\":
                    i += 1
                elif c == '"':
                    quote = None
            elif quote == "'":
                if c == "'":
                    if i + 1 < len(raw) and raw[i + 1] == "'":
                        i += 1
                    else:
                        quote = None
            elif c in "\"'" and (i == 0 or raw[i - 1] in " \t[{,:-"):
                quote = c
            elif c == "#" and (i == 0 or raw[i - 1] in " \t"):
                return raw[:i]
            i += 1
        return raw

    def peek(self):
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    # -- document

    def document(self):
        first = self.peek()
        if first is not None and first[2].strip() == "---":
            self.pos += 1
        if self.peek() is None:
            return None
        number, indent, _ = self.peek()
        node = self.block(indent)
        rest = self.peek()
        if rest is not None:
            if rest[2].strip() in ("---", "..."):
                self.unsupported(rest[0], 0, "a second document")
            self.fail(rest[0], rest[1], "unexpected content at this indentation")
        return node

    def block(self, indent):
        """The block node whose first line is the current one (at exactly `indent`)."""
        number, column, text = self.peek()
        body = text.strip()
        if body == "-" or body.startswith("- "):
            return self.sequence(column)
        if self._key_split(text[column:], number, column) is not None:
            return self.mapping(column)
        return self.inline_value(text[column:], number, column, indent - 1)

    def sequence(self, indent):
        number = self.peek()[0]
        items = []
        while self.peek() is not None:
            line, column, text = self.peek()
            body = text[column:]
            if column != indent or not (body == "-" or body.startswith("- ")):
                break
            rest = body[1:].lstrip(" ")
            if not rest:
                self.pos += 1
                nxt = self.peek()
                if nxt is None or nxt[1] <= indent:
                    items.append(ScalarNode(NULL_TAG, "", self.mark(line, column)))
                else:
                    items.append(self.block(nxt[1]))
                continue
            item_column = column + (len(body) - len(rest))
            # The item's content starts on this line, as if "- " were spaces.
            self.lines[self.pos] = (line, item_column, " " * item_column + rest)
            items.append(self.block(item_column))
        return SequenceNode(SEQ_TAG, items, self.mark(number, indent))

    def mapping(self, indent):
        number = self.peek()[0]
        pairs = []
        while self.peek() is not None:
            line, column, text = self.peek()
            if column != indent:
                if column > indent:
                    self.fail(line, column, "unexpected indentation in a mapping")
                break
            split = self._key_split(text[column:], line, column)
            if split is None:
                break
            key_text, value_text, value_column = split
            key = self.inline_value(key_text, line, column, None, key=True)
            if value_text == "":
                self.pos += 1
                nxt = self.peek()
                if nxt is not None and (nxt[1] > indent or (nxt[1] == indent and
                                                          (nxt[2].strip() == "-" or nxt[2].strip().startswith("- ")))):
                    value = self.block(nxt[1])
                else:
                    value = ScalarNode(NULL_TAG, "", self.mark(line, value_column))
            else:
                value = self.inline_value(value_text, line, value_column, indent)
            pairs.append((key, value))
        return MappingNode(MAP_TAG, pairs, self.mark(number, indent))

    def _key_split(self, body, line, column):
        """(key text, value text, value column) when body is `key: value` (a block mapping entry), else None."""
        if body[:1] in "[{" or body.startswith("- ") or body == "-":
            return None
        if body[:1] in "&*!|>%@`?":
            self.unsupported(line, column, "%r at the start of a node" % body[:1])
        i = 0
        if body[:1] in "\"'":
            i = self._quoted_end(body, 0, line, column)
            j = i
            while j < len(body) and body[j] == " ":
                j += 1
            if j < len(body) and body[j] == ":" and (j + 1 == len(body) or body[j + 1] == " "):
                value = body[j + 1:].strip()
                return body[:i], value, column + len(body) - len(body[j + 1:].lstrip(" "))
            return None
        while i < len(body):
            if body[i] == ":" and (i + 1 == len(body) or body[i + 1] == " "):
                rest = body[i + 1:]
                return body[:i].rstrip(), rest.strip(), column + len(body) - len(rest.lstrip(" "))
            i += 1
        return None

    def _quoted_end(self, text, start, line, column):
        quote = text[start]
        i = start + 1
        while i < len(text):
            if quote == '"' and text[i] == "\\":
                i += 2
                continue
            if text[i] == quote:
                if quote == "'" and i + 1 < len(text) and text[i + 1] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        self.unsupported(line, column + start, "a quoted string over several lines")

    def inline_value(self, text, line, column, parent_indent, key=False):
        """A value that starts on this line: flow collection, quoted or plain scalar (plain ones may continue on
        lines indented deeper than parent_indent). Consumes its lines."""
        text = text.strip()
        if text[:1] in "&*!|>%@`?":
            self.unsupported(line, column, "%r at the start of a node" % text[:1])
        if key:
            if text[:1] in "[{":
                self.unsupported(line, column, "a collection as a key")
            return self._scalar(text, line, column)
        self.pos += 1
        if text[:1] in "[{":
            while self._depth(text) > 0:  # a flow collection over several lines
                nxt = self.peek()
                if nxt is None:
                    self.fail(line, column, "an unclosed flow collection")
                text += " " + nxt[2].strip()
                self.pos += 1
            node, end = self._flow(text, 0, line, column)
            if text[end:].strip():
                self.fail(line, column + end, "unexpected text after a flow collection")
            return node
        if text[:1] not in "\"'":
            while self.peek() is not None and self.peek()[1] > (parent_indent if parent_indent is not None else -1):
                nxt = self.peek()
                if self._key_split(nxt[2][nxt[1]:], nxt[0], nxt[1]) is not None or nxt[2].strip().startswith("- "):
                    self.fail(nxt[0], nxt[1], "a mapping or sequence inside a plain scalar")
                text += " " + nxt[2].strip()
                self.pos += 1
        return self._scalar(text, line, column)

    def _depth(self, text):
        depth, i = 0, 0
        while i < len(text):
            c = text[i]
            if c in "\"'":
                i = self._quoted_end(text, i, 0, 0)
                continue
            depth += c in "[{"
            depth -= c in "]}"
            i += 1
        return depth

    def _scalar(self, text, line, column):
        if text[:1] in "\"'":
            end = self._quoted_end(text, 0, line, column)
            if text[end:].strip():
                self.fail(line, column + end, "unexpected text after a quoted string")
            return ScalarNode(STR_TAG, self._unquote(text[:end], line, column), self.mark(line, column))
        if _OTHER.match(text):
            self.unsupported(line, column, "the value %r (a timestamp, merge key or value key)" % text)
        if ": " in text or text.endswith(":") or " #" in text or text.startswith("- "):
            self.fail(line, column, "a plain scalar containing ': ' or ' #', or starting with '- '")
        return ScalarNode(_resolve(text), text, self.mark(line, column))

    def _unquote(self, text, line, column):
        body = text[1:-1]
        if text[0] == "'":
            return body.replace("''", "'")
        out, i = [], 0
        while i < len(body):
            c = body[i]
            if c != "\\":
                out.append(c)
                i += 1
                continue
            e = body[i + 1] if i + 1 < len(body) else ""
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
                i += 2
            elif e in _HEX_ESCAPES:
                digits = body[i + 2:i + 2 + _HEX_ESCAPES[e]]
                if len(digits) != _HEX_ESCAPES[e] or not re.match(r"^[0-9A-Fa-f]+$", digits):
                    self.fail(line, column + i, "a bad escape \\%s" % e)
                out.append(chr(int(digits, 16)))
                i += 2 + _HEX_ESCAPES[e]
            else:
                self.fail(line, column + i, "an unknown escape \\%s" % e)
        return "".join(out)

    def _flow(self, text, i, line, column):
        """The flow node at text[i] ('[', '{' or a scalar); returns (node, index after it)."""
        while i < len(text) and text[i] == " ":
            i += 1
        start = i
        if i < len(text) and text[i] in "[{":
            closing = "]" if text[i] == "[" else "}"
            items, i = [], i + 1
            while True:
                while i < len(text) and text[i] == " ":
                    i += 1
                if i < len(text) and text[i] == closing:
                    i += 1
                    break
                if closing == "}":
                    key, i = self._flow_scalar(text, i, line, column, ":")
                    if i >= len(text) or text[i] != ":":
                        self.fail(line, column + i, "a flow mapping entry without ': '")
                    value, i = self._flow(text, i + 1, line, column)
                    items.append((key, value))
                else:
                    value, i = self._flow(text, i, line, column)
                    items.append(value)
                while i < len(text) and text[i] == " ":
                    i += 1
                if i < len(text) and text[i] == ",":
                    i += 1
                elif i < len(text) and text[i] == closing:
                    continue
                else:
                    self.fail(line, column + i, "expected ',' or '%s' in a flow collection" % closing)
            tag, cls = (MAP_TAG, MappingNode) if closing == "}" else (SEQ_TAG, SequenceNode)
            return cls(tag, items, self.mark(line, column + start)), i
        return self._flow_scalar(text, i, line, column, None)

    def _flow_scalar(self, text, i, line, column, stop):
        while i < len(text) and text[i] == " ":
            i += 1
        start = i
        if i < len(text) and text[i] in "\"'":
            end = self._quoted_end(text, i, line, column)
            return ScalarNode(STR_TAG, self._unquote(text[i:end], line, column + i), self.mark(line, column + i)), end
        if i < len(text) and text[i] in "&*!|>%@`?":
            self.unsupported(line, column + i, "%r at the start of a node" % text[i])
        while i < len(text) and text[i] not in ",]}":
            if text[i] == ":" and (i + 1 == len(text) or text[i + 1] in " ,]}"):
                if stop == ":":
                    break
                self.fail(line, column + i, "a mapping inside a flow sequence entry is " + UNSUPPORTED)
            if text[i] in "[{":
                self.fail(line, column + i, "a flow collection inside a plain scalar")
            i += 1
        value = text[start:i].strip()
        if _OTHER.match(value):
            self.unsupported(line, column + start, "the value %r (a timestamp, merge key or value key)" % value)
        return ScalarNode(_resolve(value), value, self.mark(line, column + start)), i


# ---- the loader ------------------------------------------------------------------------------------------------------


class SafeLoader:
    """Constructs Python objects from the reader's nodes; subclasses register constructors per tag, as in PyYAML."""

    yaml_constructors = {}

    def __init__(self, stream):
        self.stream = stream if isinstance(stream, str) else stream.read()

    @classmethod
    def add_constructor(cls, tag, function):
        if "yaml_constructors" not in cls.__dict__:
            cls.yaml_constructors = dict(cls.yaml_constructors)
        cls.yaml_constructors[tag] = function

    def get_single_node(self):
        return _Reader(self.stream, "<unicode string>").document()

    def get_single_data(self):
        node = self.get_single_node()
        return None if node is None else self.construct_object(node, deep=True)

    def construct_object(self, node, deep=False):
        function = type(self).yaml_constructors.get(node.tag)
        if function is not None:
            return function(self, node, deep)
        if node.tag == MAP_TAG:
            return self.construct_mapping(node, deep)
        if node.tag == SEQ_TAG:
            return [self.construct_object(child, deep) for child in node.value]
        return self.construct_scalar_value(node)

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, MappingNode):
            raise ConstructorError(None, None, "expected a mapping node, but found %s" % type(node).__name__,
                                   node.start_mark)
        mapping = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                hash(key)
            except TypeError:
                raise ConstructorError("while constructing a mapping", node.start_mark, "found unhashable key",
                                       key_node.start_mark)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_scalar_value(self, node):
        text = node.value
        if node.tag == NULL_TAG:
            return None
        if node.tag == BOOL_TAG:
            return text.lower() in ("yes", "true", "on")
        if node.tag == INT_TAG:
            return _to_int(text)
        if node.tag == FLOAT_TAG:
            return _to_float(text)
        return text


def load(stream, Loader):
    return Loader(stream).get_single_data()


def safe_load(stream):
    return load(stream, SafeLoader)
