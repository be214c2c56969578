"""Seeded mutators for the fuzz campaign (tests/fuzz/fuzz_campaign.py).

Every mutator takes the valid seed input and a random.Random, and returns the
mutated input; the same seed and generator state give the same mutation, so a
case is reproduced from its (seed, format, index) alone. Three families:

* text: bytes flipped, inserted, deleted or duplicated; truncation; lines
  deleted, duplicated or swapped; numbers replaced by extremes (0, -1, 2^63,
  1e308, NaN, ...); identifiers replaced by others of the same input.
* YAML: the document loaded with PyYAML, one node replaced by an extreme or a
  value of the wrong type, a key deleted, renamed or added, then dumped again
  (so that the mutation reaches the reader's semantic checks, not just its
  parser).
* protobuf (ONNX): the wire format parsed generically into nested fields, one
  varint, fixed-width or length-delimited field changed, removed or duplicated,
  and the message re-encoded with consistent lengths; or the raw bytes mutated.
"""

import math
import re
import struct

import yaml

# Numbers a hostile input would use: sign and width boundaries, float extremes.
EXTREME_INTS = [
    "0", "-1", "1", "2", "3", "7", "-2147483648", "2147483647", "2147483648", "4294967296",
    "4611686018427387904", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "18446744073709551616", "99999999999999999999999999999999",
]
EXTREME_FLOATS = [
    "0.0", "-0.0", "-1.0", "1e308", "1.7976931348623157e308", "1e309", "-1e308", "1e-320",
    "4.9e-324", "1e-300", "nan", "NaN", ".nan", "inf", "-inf", ".inf", "-.inf", "1e30",
    "0.5", "1e-9",
]
WEIRD_TOKENS = [
    "", " ", "\t", "\n", "\x00", "\xff", "%", "@", "{", "}", "[", "]", "(", ")", ":", ",",
    "\"", "'", "#", "-", "&a", "*a", "!!binary", "?", "|", ">", "\u00e9", "\U0001F600",
]

_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_IDENT = re.compile(rb"[%@]?[A-Za-z_][A-Za-z0-9_.]*")


def _pos(rng, data):
    return rng.randrange(len(data) + 1)


# ---- byte and line mutations (any format) -------------------------------------------


def flip_bits(data, rng):
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def set_bytes(data, rng):
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if out:
            out[rng.randrange(len(out))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    return bytes(out)


def insert_bytes(data, rng):
    i = _pos(rng, data)
    junk = rng.choice([bytes([rng.randrange(256)]) for _ in range(4)] +
                      [t.encode("utf-8") for t in WEIRD_TOKENS])
    return data[:i] + junk * rng.choice([1, 1, 2, 100]) + data[i:]


def delete_span(data, rng):
    i = _pos(rng, data)
    return data[:i] + data[i + rng.randint(1, 64):]


def duplicate_span(data, rng):
    i = _pos(rng, data)
    j = min(len(data), i + rng.randint(1, 256))
    k = _pos(rng, data)
    return data[:k] + data[i:j] * rng.choice([1, 2, 8]) + data[k:]


def truncate(data, rng):
    return data[:_pos(rng, data)]


def _lines(data):
    return data.split(b"\n")


def delete_lines(data, rng):
    lines = _lines(data)
    i = rng.randrange(len(lines))
    del lines[i:i + rng.randint(1, 3)]
    return b"\n".join(lines)


def duplicate_lines(data, rng):
    lines = _lines(data)
    i = rng.randrange(len(lines))
    block = lines[i:i + rng.randint(1, 4)]
    j = rng.randrange(len(lines) + 1)
    lines[j:j] = block * rng.choice([1, 1, 2, 50])
    return b"\n".join(lines)


def swap_lines(data, rng):
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def _replace_match(data, matches, rng, replacement):
    m = rng.choice(matches)
    return data[:m.start()] + replacement + data[m.end():]


def extreme_number(data, rng):
    matches = list(_NUMBER.finditer(data))
    if not matches:
        return insert_bytes(data, rng)
    pool = EXTREME_INTS if rng.random() < 0.6 else EXTREME_FLOATS
    return _replace_match(data, matches, rng, rng.choice(pool).encode())


def scale_number(data, rng):
    """A number multiplied by a power of two or ten: sizes that stay plausible-looking."""
    matches = list(_NUMBER.finditer(data))
    if not matches:
        return truncate(data, rng)
    m = rng.choice(matches)
    try:
        value = float(m.group())
    except ValueError:
        return data
    factor = rng.choice([2, 3, 10, 1000, 2**20, 2**31, 2**40, -1])
    scaled = value * factor
    text = str(int(scaled)) if scaled.is_integer() and abs(scaled) < 1e30 else repr(scaled)
    return data[:m.start()] + text.encode() + data[m.end():]


def swap_identifier(data, rng):
    """An identifier replaced by another of the same input: names that exist, misused."""
    matches = list(_IDENT.finditer(data))
    if len(matches) < 2:
        return flip_bits(data, rng)
    return _replace_match(data, matches, rng, rng.choice(matches).group())


TEXT_MUTATORS = [
    flip_bits, set_bytes, insert_bytes, delete_span, duplicate_span, truncate, delete_lines,
    duplicate_lines, swap_lines, extreme_number, extreme_number, scale_number, swap_identifier,
    swap_identifier,
]


def mutate_text(data, rng, extra=()):
    """1-3 text mutations; `extra` adds format-specific ones to the pool."""
    pool = TEXT_MUTATORS + list(extra)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not data:
            break
        data = rng.choice(pool)(data, rng)
    return data


# ---- YAML: structured mutations ---------------------------------------------------


def _yaml_paths(node, path=()):
    """Every (path, value) of a loaded YAML document, containers included."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _yaml_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _yaml_paths(v, path + (i,))


def _wrong_value(value, rng):
    if isinstance(value, bool) or rng.random() < 0.3:
        return rng.choice([None, True, "x", [], {}, [1, 2], {"a": 1}, "", -1, 0, 1.5,
                           "1e308 GB/s", "nan s", "-1 B", "0 B", "1 YiB", "1e30 B"])
    if isinstance(value, int):
        return rng.choice([0, -1, 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, -2**63, 2**64,
                           10**30, value * 1024, -value, float("nan"), float("inf")])
    if isinstance(value, float):
        return rng.choice([0.0, -0.0, -1.0, 1e308, 1e-320, 5e-324, float("nan"), float("inf"),
                           -float("inf"), value * 1e300, value * 1e-300, -value])
    if isinstance(value, str):
        m = re.match(r"\s*([-+0-9.eE]+)\s*(.*)", value)
        if m and rng.random() < 0.7:  # a quantity with a unit, e.g. "900 GB/s"
            number = rng.choice(EXTREME_FLOATS + EXTREME_INTS)
            unit = m.group(2) if rng.random() < 0.8 else rng.choice(["", "B", "xB", "s", "GB/s",
                                                                     "TiB", "ms", "%"])
            return f"{number} {unit}".strip()
        return rng.choice(["", "x" * 10000, value + "/", "/dev/zero", ".", value.upper(),
                           "../" + value, value * 2])
    if isinstance(value, list):
        return rng.choice([[], value * 50, [value], value[:1], None, {"pow2": [0, 80]},
                           {"pow2": [1, 63]}, "all"])
    if isinstance(value, dict):
        return rng.choice([{}, [], None, [value], dict(list(value.items())[:1])])
    return rng.choice([0, "", [], {}])


def _set_path(doc, path, value):
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def _delete_path(doc, path):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return doc


def mutate_yaml_doc(doc, rng, known_keys=()):
    """One structured mutation of a loaded document; returns the new document."""
    paths = list(_yaml_paths(doc))
    path, value = rng.choice(paths)
    action = rng.random()
    if path and action < 0.15:
        return _delete_path(doc, path)
    if isinstance(value, dict) and action < 0.35:
        key = rng.choice(list(known_keys) + ["unknown_key", "", "1"]) if known_keys else "x"
        value[key] = _wrong_value(rng.choice([1, 1.0, "1 GB", [1], {}]), rng)
        return doc
    if path and isinstance(path[-1], str) and action < 0.45 and known_keys:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        new_key = rng.choice(list(known_keys))
        if new_key not in parent:
            parent[new_key] = parent.pop(path[-1])
        return doc
    return _set_path(doc, path, _wrong_value(value, rng))


def _yaml_keys(doc):
    keys = set()
    for path, _ in _yaml_paths(doc):
        if path and isinstance(path[-1], str):
            keys.add(path[-1])
    return sorted(keys)


def mutate_yaml(data, rng):
    """Half structured (load, mutate 1-2 nodes, dump), half text mutations."""
    if rng.random() < 0.5:
        return mutate_text(data, rng)
    doc = yaml.safe_load(data)
    if doc is None:
        return mutate_text(data, rng)
    keys = _yaml_keys(doc)
    for _ in range(rng.choice([1, 1, 2])):
        doc = mutate_yaml_doc(doc, rng, keys)
    style = rng.choice([None, False, True])  # block, flow-in-block, flow
    return yaml.safe_dump(doc, default_flow_style=style, sort_keys=False,
                          allow_unicode=True).encode("utf-8")


# ---- protobuf wire format (ONNX) ------------------------------------------------------


def _read_varint(data, i):
    value, shift = 0, 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("bad varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _varint(value):
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def parse_message(data, depth=0):
    """Fields [number, wire_type, value] of a message; a length-delimited value is
    itself parsed when it reads as a message (else kept as bytes). Raises
    ValueError when `data` is not a message."""
    fields, i = [], 0
    while i < len(data):
        key, i = _read_varint(data, i)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ValueError("field 0")
        if wire == 0:
            value, i = _read_varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 2:
            n, i = _read_varint(data, i)
            value, i = data[i:i + n], i + n
            if depth < 12 and value:
                try:
                    value = parse_message(value, depth + 1)
                except ValueError:
                    pass
        else:
            raise ValueError("wire type")
        if i > len(data):
            raise ValueError("truncated")
        fields.append([number, wire, value])
    return fields


def encode_message(fields):
    out = bytearray()
    for number, wire, value in fields:
        out += _varint(number << 3 | wire)
        if wire == 0:
            out += _varint(value)
        elif wire == 2:
            payload = encode_message(value) if isinstance(value, list) else value
            out += _varint(len(payload)) + payload
        else:
            out += value
    return bytes(out)


def _all_fields(fields, out):
    for field in fields:
        out.append((fields, field))
        if isinstance(field[2], list):
            _all_fields(field[2], out)
    return out


def _mutate_field(parent, field, rng):
    number, wire, value = field
    if wire == 0:
        field[2] = rng.choice([0, 1, 2, 3, 7, 16, 2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1,
                               2**63, 2**64 - 1, value + 1, max(0, value - 1), value * 1024])
    elif wire == 5:
        field[2] = struct.pack("<f", rng.choice([math.nan, math.inf, -1.0, 0.0, 1e38]))
    elif wire == 1:
        field[2] = struct.pack("<d", rng.choice([math.nan, math.inf, -1.0, 0.0, 1e308]))
    elif isinstance(value, list):
        action = rng.random()
        if action < 0.4 and value:
            del value[rng.randrange(len(value))]
        elif action < 0.7 and value:
            value.append(list(rng.choice(value)))
        else:
            field[2] = encode_message(value)[:rng.randrange(len(encode_message(value)) + 1)]
    else:
        field[2] = rng.choice([b"", value[:len(value) // 2], value * 2, b"\xff\xfe",
                               b"x" * 1000, flip_bits(value, rng) if value else b"\x00"])


def mutate_protobuf(data, rng):
    """A structured mutation of 1-3 fields, or (a third of the time) a byte mutation."""
    if rng.random() < 0.33:
        return mutate_text(data, rng, extra=[flip_bits, set_bytes])
    try:
        message = parse_message(data)
    except ValueError:
        return mutate_text(data, rng)
    fields = _all_fields(message, [])
    for _ in range(rng.choice([1, 1, 2, 3])):
        parent, field = rng.choice(fields)
        action = rng.random()
        if action < 0.15 and any(f is field for f in parent):
            del parent[next(i for i, f in enumerate(parent) if f is field)]
        elif action < 0.25:
            parent.append([field[0], field[1], field[2]])
        elif action < 0.3:
            field[0] = rng.choice([1, 2, 3, 4, 5, 7, 8, 11, 20, 1000])
        else:
            _mutate_field(parent, field, rng)
    return encode_message(message)
