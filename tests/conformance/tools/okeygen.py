"""Helpers to write conformance scenarios (shared/conformance/FORMAT.md) by hand.

A scenario names only the tiles that matter; `scenario()` fills every rack to 21/22 tiles and the
pile to the wanted length with filler tiles, checking that no tile is used more often than the
106-tile set has it. Fillers are never okeys or false jokers, never a tile listed in `avoid`, and
are chosen deterministically (seeded by the file name, or the `seed` a scenario gives), so re-running
gives the same files.

Expected results are never computed here: each scenario states them, worked out from RULES.md.
"""

import json
import random
from collections import Counter
from pathlib import Path

COLOURS = "RYBK"


def full_set():
    tiles = [f"{c}{n}" for c in COLOURS for n in range(1, 14) for _ in range(2)]
    return tiles + ["F", "F"]


def okey_of(indicator):
    c, n = indicator[0], int(indicator[1:])
    return f"{c}{1 if n == 13 else n + 1}"


def split(s):
    """'K9 K10 K11' -> ['K9', 'K10', 'K11']; lists pass through."""
    return s.split() if isinstance(s, str) else list(s)


def melds(s):
    """'K9 K10 K11 | B1 B2 B3' -> [['K9','K10','K11'], ['B1','B2','B3']]."""
    return [split(m) for m in s.split("|")]


def P(seat, points, reason):
    return {"seat": seat, "points": points, "reason": reason}


def _step(seat, act, ok=True, pen=(), **fields):
    step = {"seat": seat, "act": act}
    step.update(fields)
    step["expect"] = {"ok": ok, "penalties": list(pen)}
    return step


def draw(seat, ok=True, pen=()):
    return _step(seat, "draw", ok, pen)


def take(seat, ok=True, pen=()):
    return _step(seat, "take_discard", ok, pen)


def ret(seat, ok=True, pen=()):
    return _step(seat, "return_discard", ok, pen)


def open_(seat, ms, ok=True, pen=()):
    return _step(seat, "open", ok, pen, melds=melds(ms))


def lay(seat, ms, ok=True, pen=()):
    return _step(seat, "lay", ok, pen, melds=melds(ms))


def add(seat, meld, tiles, ok=True, pen=()):
    return _step(seat, "add", ok, pen, meld=meld, tiles=split(tiles))


def retrieve(seat, meld, tiles, ok=True, pen=()):
    return _step(seat, "retrieve", ok, pen, meld=meld, tiles=split(tiles))


def discard(seat, tile, ok=True, pen=()):
    return _step(seat, "discard", ok, pen, tile=tile)


def call(seat, ok=True, pen=()):
    return _step(seat, "call_playable", ok, pen)


def timeout(seat, ok=True, pen=()):
    return _step(seat, "timeout", ok, pen)


def in_progress():
    return {"outcome": "in_progress"}


def finished(winner, scores):
    return {"outcome": "finished", "winner": winner, "scores": list(scores)}


def pile_empty(scores):
    return {"outcome": "pile_empty", "winner": None, "scores": list(scores)}


def cancelled():
    return {"outcome": "cancelled", "winner": None}


SCENARIOS = []


def scenario(file, name, *, steps, end, rules=None, ind="R9", first=0, racks=("", "", "", ""), pile="",
             pile_len=20, avoid="", seed=None):
    """Registers one scenario. `racks` and `pile` list the tiles that matter (the pile's first tiles
    are drawn first); everything else is filler. Fillers are drawn with `seed`, the file name unless
    given (a renamed scenario keeps its former name here, so its racks stay the ones checked)."""
    racks = [split(r) for r in racks]
    pile = split(pile)
    used = Counter([ind] + [t for r in racks for t in r] + pile)
    limit = Counter(full_set())
    for t, n in used.items():
        if t not in limit:
            raise SystemExit(f"{file}: `{t}` is not a tile")
        if n > limit[t]:
            raise SystemExit(f"{file}: {t} used {n} times")
    okey = okey_of(ind)
    banned = {okey, "F"} | set(split(avoid))
    pool = [t for t in sorted((limit - used).elements()) if t not in banned]
    random.Random(file if seed is None else seed).shuffle(pool)
    out_racks = []
    for seat, rack in enumerate(racks):
        want = 22 if seat == first else 21
        if len(rack) > want:
            raise SystemExit(f"{file}: rack {seat} has {len(rack)} tiles, more than {want}")
        need = want - len(rack)
        if need > len(pool):
            raise SystemExit(f"{file}: not enough filler for rack {seat}")
        out_racks.append(rack + pool[:need])
        pool = pool[need:]
    more = max(0, min(pile_len - len(pile), len(pool)))
    out_pile = pile + pool[:more]
    rules = {"preset": "classic", **(rules or {})}
    SCENARIOS.append({
        "file": file,
        "data": {
            "name": name,
            "rules": rules,
            "deal": {"indicator": ind, "first": first, "racks": out_racks, "pile": out_pile},
            "steps": steps,
            "expect_end": end,
        },
    })


def _dump(v):
    return json.dumps(v, ensure_ascii=False)


def render(data):
    """JSON in the layout of the shared examples: one rack and one step per line."""
    d = data["deal"]
    lines = ["{", f'  "name": {_dump(data["name"])},', f'  "rules": {_dump(data["rules"])},', '  "deal": {',
             f'    "indicator": {_dump(d["indicator"])}, "first": {d["first"]},', '    "racks": [']
    lines += [f"      {_dump(r)}{',' if i < 3 else ''}" for i, r in enumerate(d["racks"])]
    lines += ["    ],", f'    "pile": {_dump(d["pile"])}', "  },", '  "steps": [']
    steps = data["steps"]
    lines += [f"    {_dump(s)}{',' if i < len(steps) - 1 else ''}" for i, s in enumerate(steps)]
    lines += ["  ],", f'  "expect_end": {_dump(data["expect_end"])}', "}"]
    return "\n".join(lines) + "\n"


def write_all(directory):
    directory = Path(directory)
    names = set()
    for s in SCENARIOS:
        if s["file"] in names:
            raise SystemExit(f"duplicate file {s['file']}")
        names.add(s["file"])
        (directory / f"{s['file']}.json").write_text(render(s["data"]))
    return len(SCENARIOS)
