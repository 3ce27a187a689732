"""Scenarios from a fifth audit of the rules against RULES.md and the seeds (154 on): each pins a
point no earlier scenario pinned (false jokers and okey readings, 12-13-1, playability, the pile's
last tile, scores of the presets, retrieval charges). Registered by make_scenarios.py. Expected
results are worked out by hand from RULES.md and the seeds.

Two things differ from the other modules:
- each scenario's filler tiles are drawn with the seed the audit's generator used (the audit's own
  file name, `r5_...`), so the racks are exactly the audited ones;
- a pile-out whose opened racks hold filler tiles states its scoring rule here (face value, 202,
  double, +101 per held okey) and leaves only the totalling of the tiles still in those racks to
  `_tiles_left`, which follows where the tiles go after each step expected to succeed and applies
  no rule.
"""

from collections import Counter

from okeygen import (SCENARIOS, P, add, call, discard, draw, finished, in_progress, lay, okey_of, open_,
                     pile_empty, ret, retrieve, scenario, take)
from scenarios_b import DO, DP, OR, SDO, TR, WO


def _tiles_left(data):
    """Each seat's rack after the steps expected to succeed (bookkeeping only, no rules)."""
    d = data["deal"]
    racks = [Counter(r) for r in d["racks"]]
    pile = list(d["pile"])
    last = {}  # seat -> its discard still on the side
    held = {}  # seat -> (seat it took from, tile) while a side discard may be given back
    for s in data["steps"]:
        if not s["expect"]["ok"]:
            continue
        seat, act = s["seat"], s["act"]
        r = racks[seat]
        if act == "draw":
            r[pile.pop(0)] += 1
        elif act == "take_discard":
            prev = (seat + 3) % 4
            t = last.pop(prev)
            r[t] += 1
            held[seat] = (prev, t)
        elif act == "return_discard":
            prev, t = held.pop(seat)
            r[t] -= 1
            last[prev] = t
        elif act in ("open", "lay"):
            for m in s["melds"]:
                for t in m:
                    r[t.split("=")[0]] -= 1
        elif act == "add":
            for t in s["tiles"]:
                r[t.split("=")[0]] -= 1
        elif act == "discard":
            r[s["tile"]] -= 1
            last[seat] = s["tile"]
        elif act != "call_playable":
            raise SystemExit(f"{data['name']}: `{act}` is not followed by _tiles_left")
        if any(n < 0 for n in r.values()):
            raise SystemExit(f"{data['name']}: seat {seat} plays a tile it does not hold")
    return racks


def _rack(data, seat):
    """(sum of the numbers left in `seat`'s rack without its okeys, okeys held); a false joker
    counts the okey's number."""
    okey = okey_of(data["deal"]["indicator"])
    total = okeys = 0
    for t, n in _tiles_left(data)[seat].items():
        if t == okey:
            okeys += n
        else:
            total += n * int((okey if t == "F" else t)[1:])
    return total, okeys


def sc(file, seed, name, end=None, **kw):
    """Registers `file` with the racks the audit drew for `seed`. `end` may be a function of
    `rack(seat)` (see `_rack`) for an end whose scores total filler tiles."""
    scenario(seed, name, end=in_progress() if end is None or callable(end) else end, **kw)
    s = SCENARIOS[-1]
    s["file"] = file
    if callable(end):
        s["data"]["expect_end"] = end(lambda seat: _rack(s["data"], seat))


# ---------------------------------------------------------------------------------------------
# False jokers and okeys in pairs
# ---------------------------------------------------------------------------------------------

# a01: a false joker is not an okey: discarding it mid-hand costs nothing, finishing with it is
# not an okey finish (m = 1 for a finisher who opened in an earlier turn).
# RULES: "A false joker is not wild: it is a plain tile with the okey's colour and number."
#        "o = 1 if the final discard is an okey"
sc("154_finishing_with_a_false_joker_is_not_an_okey_finish",
   "r5_a01_finishing_with_a_false_joker_is_not_an_okey_finish",
   "a false joker discarded mid-hand is not charged as an okey, and a finish with it is not multiplied",
   racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1 F", "R3", "R5", "R6 F"],
   pile="Y1 Y2 Y3 K6",
   steps=[open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
          discard(0, "R1"),
          draw(1), discard(1, "R3"),
          draw(2), discard(2, "R5"),
          draw(3), discard(3, "F"),            # F = R10 face; no red meld: not playable, not an okey
          draw(0), add(0, 0, "K6"), discard(0, "F")],
   end=finished(0, [-101, 202, 202, 202]))

# a02: a false joker plus an okey is a pair (one real tile with an okey)
sc("155_false_joker_with_an_okey_is_a_pair",
   "r5_a02_false_joker_with_an_okey_is_a_pair",
   "F with an okey is a pair (F is a real tile): five pairs open",
   racks=["F R10 K5 K5 B7 B7 Y2 Y2 K12 K12 B1", "", "", ""],
   steps=[open_(0, "F R10 | K5 K5 | B7 B7 | Y2 Y2 | K12 K12"), discard(0, "B1"), draw(1)],
   avoid="B1")

# a03: two pairs of the same face, each a real tile with an okey
sc("156_two_tile_okey_pairs_of_the_same_face",
   "r5_a03_two_tile_okey_pairs_of_the_same_face",
   "K5+okey twice counts as two pairs (each one real tile with an okey)",
   racks=["K5 R10 K5 R10 B7 B7 Y2 Y2 K12 K12 B1", "", "", ""],
   steps=[open_(0, "K5 R10 | K5 R10 | B7 B7 | Y2 Y2 | K12 K12"), discard(0, "B1"), draw(1)])

# ---------------------------------------------------------------------------------------------
# Okey readings and 12-13-1
# ---------------------------------------------------------------------------------------------

# a04: yudum (wrap on): okey standing for the 13 between 12 and a wrapped 1: 12-13-1 = 26.
# 26 + 55 + 20 = 101 exactly: accepted.
sc("157_yudum_okey_as_13_in_12_13_1_opens_exactly_101",
   "r5_a04_yudum_okey_as_13_in_12_13_1_opens_exactly_101",
   "yudum: K12 okey K1 reads 12-13-1 worth 26; with Y9-13 (55) and four 5s (20) that is exactly 101",
   rules={"preset": "yudum"},
   racks=["K12 R10 K1 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B1", "", "", ""],
   steps=[open_(0, "K12 R10 K1 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5"), discard(0, "B1"), draw(1)])

# a05: yudum: the same with one 5 fewer is 96 + ... -> wrong opening: shows the 1 is worth 1
sc("158_yudum_okey_as_12_before_13_1_is_worth_26",
   "r5_a05_yudum_okey_as_12_before_13_1_is_worth_26",
   "yudum: K13 K1 with an okey reads 12-13-1 (26, the only run); with 55 + 15 it is 96: a wrong opening",
   rules={"preset": "yudum"},
   racks=["K13 K1 R10 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 B1", "", "", ""],
   steps=[open_(0, "K13 K1 R10 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5", pen=[P(0, 101, WO)]),
          discard(0, "B1"), draw(1)])

# a06: yudum: explicit reading okey=K1 after K12 K13 is 26 (not 14)
sc("159_yudum_explicit_okey_as_wrapped_1",
   "r5_a06_yudum_explicit_okey_as_wrapped_1",
   "yudum: K12 K13 R10=K1 is 12-13-1 = 26; 26 + 55 + 20 = 101 opens",
   rules={"preset": "yudum"},
   racks=["K12 K13 R10 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B1", "", "", ""],
   steps=[open_(0, "K12 K13 R10=K1 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5"), discard(0, "B1"), draw(1)])

# a07: yudum: K1 with two okeys: the reading worth most is 12-13-1 = 26 (not 1-2-3 = 6, not 1-1-1 = 3)
sc("160_yudum_1_with_two_okeys_reads_12_13_1",
   "r5_a07_yudum_1_with_two_okeys_reads_12_13_1",
   "yudum: K1 R10 R10 takes the reading worth most, 12-13-1 = 26; 26 + 55 + 20 = 101 opens",
   rules={"preset": "yudum"},
   racks=["K1 R10 R10 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B1", "", "", ""],
   steps=[open_(0, "K1 R10 R10 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5"), discard(0, "B1"), draw(1)])

# a08: classic: K1 with two okeys reads 1-2-3 = 6: 6 + 55 + 20 + 20 = 101 opens
sc("161_classic_1_with_two_okeys_reads_1_2_3",
   "r5_a08_classic_1_with_two_okeys_reads_1_2_3",
   "classic: K1 R10 R10 is 1-2-3 = 6 (no wrap); 6 + 55 + 20 + 20 = 101 opens",
   racks=["K1 R10 R10 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B5 Y5 R5 K5 B1", "", "", ""],
   steps=[open_(0, "K1 R10 R10 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5 | B5 Y5 R5 K5"), discard(0, "B1"), draw(1)])

# a09: classic: K12 K13 F with indicator K13 (okey K1, F plays K1): 12-13-1 is not a run -> rejected
sc("162_classic_false_joker_as_1_after_13_is_no_run",
   "r5_a09_classic_false_joker_as_1_after_13_is_no_run",
   "indicator K13: F plays K1; K12 K13 F is 12-13-1, not a run without the option: rejected, no penalty",
   ind="K13",
   racks=["K12 K13 F Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 F K2 K3 B1", "", "", ""],
   steps=[open_(0, "K12 K13 F | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5", ok=False),
          # F K2 K3 is 1-2-3 = 6; 6+55+20 = 81 -> wrong opening (valid melds below 101)
          open_(0, "F K2 K3 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5", pen=[P(0, 101, WO)]),
          discard(0, "B1"), draw(1)])

# a10: yudum: indicator K13, F plays K1: K12 K13 F is 12-13-1 = 26 -> exactly 101 opens
sc("163_yudum_false_joker_as_wrapped_1",
   "r5_a10_yudum_false_joker_as_wrapped_1",
   "yudum, indicator K13: F plays K1; K12 K13 F is 12-13-1 = 26; + 55 + 20 = 101 opens",
   rules={"preset": "yudum"}, ind="K13",
   racks=["K12 K13 F Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B1", "", "", ""],
   steps=[open_(0, "K12 K13 F | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5"), discard(0, "B1"), draw(1)])

# a11: yudum (auto override): a run whose 13 is an okey takes a 1; nothing follows a wrapped 1
sc("164_wrap_run_ending_in_an_okey_13_takes_a_1_then_nothing",
   "r5_a11_wrap_run_ending_in_an_okey_13_takes_a_1_then_nothing",
   "wrap on: K11 K12 okey(13) takes K1; then K2 cannot follow (13-1-2 never); K2 is not playable, K10 is",
   rules={"preset": "yudum", "playable_discard": "auto"},
   racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B3 B4 B5 K1 K2", "K10", "", ""],
   steps=[open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B3 B4 B5"),
          add(0, 0, "K1"), add(0, 0, "K2", ok=False),
          discard(0, "K2"),
          take(1, ok=True), ret(1),            # K2 not playable: may be taken, returned free
          draw(1), discard(1, "K10", pen=[P(1, 101, DP)]),
          take(2, ok=False), draw(2)])

# a12: yudum: the okey standing for a wrapped 1 is retrieved with a real 1; placer charged;
# the retrieved okey discarded costs 101 (yudum is called mode: an okey is still charged at once)
sc("165_yudum_retrieve_okey_standing_for_wrapped_1",
   "r5_a12_yudum_retrieve_okey_standing_for_wrapped_1",
   "yudum: K12 K13 R10=K1 on the table; another opened seat supplies K1, gets the okey, seat 0 pays 101; discarding it costs 101",
   rules={"preset": "yudum"},
   racks=["K12 K13 R10 Y9 Y10 Y11 Y12 Y13 B5 Y5 R5 K5 B1", "R11 R12 R13 B9 B10 B11 B12 B13 Y3 Y4 Y5 K1", "", ""],
   steps=[open_(0, "K12 K13 R10=K1 | Y9 Y10 Y11 Y12 Y13 | B5 Y5 R5 K5"), discard(0, "B1"),
          draw(1), open_(1, "R11 R12 R13 | B9 B10 B11 B12 B13 | Y3 Y4 Y5"),   # 36+55+12 = 103 >= 102
          retrieve(1, 0, "K1", pen=[P(0, 101, OR)]),
          discard(1, "R10", pen=[P(1, 101, DO)]),
          take(2, ok=False), draw(2)])

# ---------------------------------------------------------------------------------------------
# Playable discards, the pile's last tile, end-of-hand scores
# ---------------------------------------------------------------------------------------------

# b01: pairs take nothing: the twin of a pair's real tile (pair holds an okey) is not playable
sc("166_twin_of_a_pair_with_an_okey_is_not_playable",
   "r5_b01_twin_of_a_pair_with_an_okey_is_not_playable",
   "a pair K5+okey on the table: discarding the other K5 costs nothing and the next seat may take it",
   racks=["K5 R10 K5 B7 B7 Y2 Y2 K12 K12 Y11 Y11", "", "", ""],
   steps=[open_(0, "K5 R10 | B7 B7 | Y2 Y2 | K12 K12 | Y11 Y11"), discard(0, "K5"),
          take(1), ret(1), draw(1)])

# b02: the tile an okey stands for inside a run, and the colour an okey stands for in a 4-tile
# set, are not playable (no add can take them; only a retrieval)
sc("167_tiles_only_an_okey_retrieval_could_take_are_not_playable",
   "r5_b02_tiles_only_an_okey_retrieval_could_take_are_not_playable",
   "K6 (okey's place inside K5-K9) and R13 (okey's colour in a full 13-set) fit no add: no penalty, may be taken",
   racks=["K5 R10 K7 K8 K9 Y13 B13 K13 R10 B9 B10 B11 B12 B13 K6", "R13", "", ""],
   steps=[open_(0, "K5 R10 K7 K8 K9 | Y13 B13 K13 R10 | B9 B10 B11 B12 B13"), discard(0, "K6"),
          take(1), ret(1), draw(1), discard(1, "R13"),
          take(2), ret(2), draw(2)])


# b03: a take from the side leaves the pile as it is: with one tile left the hand goes on;
# the next draw empties it and that seat's discard ends the hand, scored with m = 1.
# Seat 1 (opened) scores its rack's face value (90 with this deal's filler), the others 202.
def b03_end(rack):
    s1, k1 = rack(1)
    return pile_empty([202, s1 + 101 * k1, 202, 202])


sc("168_taking_the_side_discard_does_not_empty_the_pile",
   "r5_b03_taking_the_side_discard_does_not_empty_the_pile",
   "pile of 1: seat 1 takes the side discard and opens; its discard does not end the hand; seat 2 draws the last tile and its discard does",
   racks=["K8 R2", "K9 K10 B10 B11 B12 B13 Y12 R12 K12 Y1", "R3", ""],
   pile="Y4", pile_len=1,
   steps=[discard(0, "K8"), take(1),
          open_(1, "K8 K9 K10 | B10 B11 B12 B13 | Y12 R12 K12", pen=[P(0, 80, SDO)]),
          discard(1, "Y1"),
          draw(2), discard(2, "R3")],
   end=b03_end)

# b04: the last pile tile drawn, then the drawer goes out: a finish (winner), not a pile-out
sc("169_going_out_after_drawing_the_last_tile_is_a_finish",
   "r5_b04_going_out_after_drawing_the_last_tile_is_a_finish",
   "seat 1 draws the last tile, lays 21 and discards its last tile: finished (direct, m = 2), not pile_empty",
   racks=["R2", "K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13", "", ""],
   pile="Y1", pile_len=1,
   steps=[discard(0, "R2"), draw(1),
          open_(1, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
          discard(1, "Y1")],
   end=finished(1, [404, -202, 404, 404]))

# b05: partners: the finisher's partner scores 0 even holding both okeys (no surcharge)
sc("170_partners_finishers_partner_holding_okeys_scores_0",
   "r5_b05_partners_finishers_partner_holding_okeys_scores_0",
   "partners: seat 0 goes out directly; seat 2 holds both okeys and never opened: 0; seats 1 and 3: 202 x 2",
   rules={"partners": True},
   racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13 Y1", "", "R10 R10", ""],
   steps=[open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
          discard(0, "Y1")],
   end=finished(0, [-202, 404, 0, 404]))

# The pile-out hand of b06, b07 and b10: seat 0 opens with melds, seat 1 with five pairs, each
# keeping one okey R10; seat 1's discard empties the pile. Seats 2 and 3 never open: 202.
PILE_OUT_TWO_OKEYS = dict(
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R10 R1", "B3 B3 B6 B6 Y2 Y2 K4 K4 Y7 Y7 R10 R2", "R3", ""],
    pile="K1", pile_len=1,
    steps=[open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "R1"),
           draw(1), open_(1, "B3 B3 | B6 B6 | Y2 Y2 | K4 K4 | Y7 Y7"), discard(1, "R2")],
)


# b06: solo pile-out: seed 003 counts a held okey at the okey's number ("Okeys and false jokers
# left in hand count as the okey's number"); RULES.md ("A held okey counts 101 instead of its
# number and is never multiplied") stands, so each opened rack's okey is 101 on top, a pair
# opener's rack doubled without it. With this deal's filler: 71 + 101 = 172 and 2 x 60 + 101 = 221.
def b06_end(rack):
    (s0, k0), (s1, k1) = rack(0), rack(1)
    return pile_empty([s0 + 101 * k0, 2 * s1 + 101 * k1, 202, 202])


sc("171_solo_pile_out_held_okeys_cost_101",
   "r5_b06_solo_pile_out_held_okeys_count_the_okey_number",
   "solo: pile runs out; a held okey costs 101 on top (RULES.md, not seed 003's okey number): meld opener 71 + 101 = 172; pair opener 2 x 60 + 101 = 221",
   rules={"preset": "solo"},
   end=b06_end,
   **PILE_OUT_TWO_OKEYS)


# b07: practice pile-out: held okey +101 outside (seed 002 names no other okey count)
# With this deal's filler: 77 + 101 = 178 and 2 x 69 + 101 = 239.
def b07_end(rack):
    (s0, k0), (s1, k1) = rack(0), rack(1)
    return pile_empty([s0 + 101 * k0, 2 * s1 + 101 * k1, 202, 202])


sc("172_practice_pile_out_held_okeys_101",
   "r5_b07_practice_pile_out_held_okeys_101",
   "practice: pile runs out; held okeys are +101 each on opened racks",
   rules={"preset": "practice"},
   end=b07_end,
   **PILE_OUT_TWO_OKEYS)

# b08: retrieving your own okey costs nothing; going out with it (opened earlier) doubles once
sc("173_retrieve_own_okey_then_finish_with_it",
   "r5_b08_retrieve_own_okey_then_finish_with_it",
   "seat 0 retrieves its own okey (no charge) and goes out with it in a later turn: m = 2",
   racks=["K1 K2 K3 R10 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R2 K4", "R3", "R5", "R6"],
   pile="Y1 Y2 Y3 Y8",
   steps=[open_(0, "K1 K2 K3 R10 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
          discard(0, "R2"),
          draw(1), discard(1, "R3"), draw(2), discard(2, "R5"), draw(3), discard(3, "R6"),
          draw(0), add(0, 2, "Y8"), retrieve(0, 0, "K4"), discard(0, "R10")],
   end=finished(0, [-202, 404, 404, 404]))

# b09: a rejected opening (not a run) with the side discard changes nothing: no penalty, the
# side discard is still held and can be given back free
sc("174_rejected_opening_keeps_the_side_discard_free_return",
   "r5_b09_rejected_opening_keeps_the_side_discard_free_return",
   "seat 1 takes K8, its opening has an invalid meld: rejected, no penalty; the free return still works",
   racks=["K8", "K9 K11 B10 B11 B12 B13 Y12 R12 K12 Y1", "", ""],
   steps=[discard(0, "K8"), take(1),
          open_(1, "K8 K9 K11 | B10 B11 B12 B13 | Y12 R12 K12", ok=False),
          discard(1, "Y1", ok=False),
          ret(1), draw(1), discard(1, "Y1"), draw(2)])


# b10: penalties preset pile-out: plain scores (202 never opened, face value, +101 per okey)
# With this deal's filler: 72 + 101 = 173 and 2 x 48 + 101 = 197.
def b10_end(rack):
    (s0, k0), (s1, k1) = rack(0), rack(1)
    return pile_empty([s0 + 101 * k0, 2 * s1 + 101 * k1, 202, 202])


sc("175_penalties_pile_out_is_scored_plainly",
   "r5_b10_penalties_pile_out_is_scored_plainly",
   "penalties: pile runs out; never opened 202, opened face value, pair opener double, +101 per held okey",
   rules={"preset": "penalties"},
   end=b10_end,
   **PILE_OUT_TWO_OKEYS)

# ---------------------------------------------------------------------------------------------
# Retrieval charges, rollback, sets with an okey, the called mode at the pile's end
# ---------------------------------------------------------------------------------------------

# c09: okey_retrieved goes to whoever last placed the okey: seat 0 lays it, seat 1 retrieves
# (seat 0 pays) and lays it again, seat 2 retrieves (seat 1 pays)
sc("176_okey_retrieved_charges_the_last_placer",
   "r5_c09_okey_retrieved_charges_the_last_placer",
   "an okey re-laid by the seat that retrieved it: the next retrieval charges that seat, not the first placer",
   racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B1 B2 B3 B4 R1",
          "B9 B10 B11 B12 B13 R11 R12 R13 Y5 Y6 Y7 K13 Y2 Y3 K2",
          "R1 R2 R3 R4 R5 K6 K7 K8 K9 K10 B10 B11 B12 B13 Y4 K3", ""],
   steps=[open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B1 B2 B3 B4"), discard(0, "R1"),
          draw(1), open_(1, "B9 B10 B11 B12 B13 | R11 R12 R13 | Y5 Y6 Y7"),
          retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
          lay(1, "Y2 Y3 R10"),            # okey reads Y4 (worth most)
          discard(1, "K2"),
          draw(2), open_(2, "R1 R2 R3 R4 R5 | K6 K7 K8 K9 K10 | B10 B11 B12 B13"),
          retrieve(2, 6, "Y4", pen=[P(1, 101, OR)]),
          discard(2, "K3"), draw(3)])

# c11: an opening undone by a rollback leaves the seat never opened at the hand's end
sc("177_opening_undone_by_rollback_scores_as_never_opened",
   "r5_c11_opening_undone_by_rollback_scores_as_never_opened",
   "seat 1 opens with the side discard, gives it back (rollback, 101, the 80 voided); seat 2 goes out directly: seat 1 scores 202 x 2",
   racks=["K8", "K9 K10 K11 K12 R11 R12 R13 Y6 Y7 Y8 Y1",
          "K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13", ""],
   pile="Y2 Y3",
   steps=[discard(0, "K8"), take(1),
          open_(1, "K8 K9 K10 K11 K12 | R11 R12 R13 | Y6 Y7 Y8", pen=[P(0, 80, SDO)]),
          ret(1, pen=[P(1, 101, TR)]), draw(1), discard(1, "Y1"),
          draw(2),
          open_(2, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
          discard(2, "Y3")],
   end=finished(2, [404, 404, -202, 404]))

# c13: a set with an okey fixed as yellow still takes a real yellow (and red): both are playable
sc("178_set_with_an_okey_fixed_to_a_colour_still_takes_that_colour",
   "r5_c13_set_with_an_okey_fixed_to_a_colour_still_takes_that_colour",
   "K5 B5 R10=Y5: a real Y5 may still be added (the okey then stands for red), so discarding Y5 or R5 costs 101",
   racks=["K5 B5 R10 Y9 Y10 Y11 Y12 Y13 K9 K10 K11 K12 K13 Y5", "R5", "", ""],
   steps=[open_(0, "K5 B5 R10=Y5 | Y9 Y10 Y11 Y12 Y13 | K9 K10 K11 K12 K13"),
          discard(0, "Y5", pen=[P(0, 101, DP)]),
          take(1, ok=False), draw(1), discard(1, "R5", pen=[P(1, 101, DP)]), draw(2)])


# c22: called mode: a playable discard that empties the pile cannot be called: nobody is charged
# Seat 0 (opened) scores its rack's face value (77 with this deal's filler), the others 202.
def c22_end(rack):
    s0, k0 = rack(0)
    return pile_empty([s0 + 101 * k0, 202, 202, 202])


sc("179_called_mode_playable_last_discard_of_a_pile_out_is_not_charged",
   "r5_c22_called_mode_playable_last_discard_of_a_pile_out_is_not_charged",
   "called mode: seat 1 draws the last tile and discards a playable K8: the hand ends, nobody can call, no penalty",
   rules={"playable_discard": "called"},
   racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1", "K8", "", ""],
   pile="B1", pile_len=1,
   steps=[open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "R1"),
          draw(1), discard(1, "K8"), call(2, ok=False)],
   end=c22_end)

# ---------------------------------------------------------------------------------------------
# Okeys next to false jokers, and the reading worth most
# ---------------------------------------------------------------------------------------------

# d01: a pair F+okey is retrieved with the other false joker (the twin of F's face); placer pays
sc("180_okey_in_a_false_joker_pair_is_retrieved_with_the_other_false_joker",
   "r5_d01_okey_in_a_false_joker_pair_is_retrieved_with_the_other_false_joker",
   "pair F+okey: an opened seat supplies the other F and takes the okey; seat 0 pays 101",
   racks=["F R10 K5 K5 B7 B7 Y2 Y2 K12 K12 B1", "R11 R12 R13 B9 B10 B11 B12 B13 Y3 Y4 Y5 F Y1", "", ""],
   steps=[open_(0, "F R10 | K5 K5 | B7 B7 | Y2 Y2 | K12 K12"), discard(0, "B1"),
          draw(1), open_(1, "R11 R12 R13 | B9 B10 B11 B12 B13 | Y3 Y4 Y5"),
          retrieve(1, 0, "F", pen=[P(0, 101, OR)]),
          discard(1, "Y1"), draw(2)])

# d02: a set of 10s whose red is a false joker: with indicator R9 the real red 10s are okeys, so
# the okey in [Y10 B10 okey] comes back only with K10 and F (every missing colour)
sc("181_three_tile_set_of_the_okey_number_needs_the_false_joker_as_its_red",
   "r5_d02_three_tile_set_of_the_okey_number_needs_the_false_joker_as_its_red",
   "Y10 B10 okey: K10 alone cannot retrieve; K10 + F (red 10) can; the set becomes 4 real tiles",
   racks=["Y10 B10 R10 Y11 Y12 Y13 K9 K10 K11 K12 K13 B1", "R11 R12 R13 B11 B12 B13 Y3 Y4 Y5 K10 F Y1 B4 B5 B6 K1 K2 K3", "", ""],
   steps=[open_(0, "Y10 B10 R10 | Y11 Y12 Y13 | K9 K10 K11 K12 K13"), discard(0, "B1"),
          draw(1), open_(1, "R11 R12 R13 | B11 B12 B13 | Y3 Y4 Y5 | B4 B5 B6 | K1 K2 K3"),
          retrieve(1, 0, "K10", ok=False),
          retrieve(1, 0, "K10 F", pen=[P(0, 101, OR)]),
          discard(1, "Y1"), draw(2)])

# d03: classic: a 4-tile meld of two real 13s and both okeys reads as four 13s (52), the most
# (K13 and Y13 differ in colour, so no run reading exists: the set of four 13s is the only one.)
sc("182_two_13s_with_both_okeys_read_as_four_13s_52",
   "r5_d03_two_13s_with_both_okeys_read_as_four_13s_52",
   "K13 Y13 with both okeys reads as four 13s (52: two colours make no run); 52 + 55 = 107 opens",
   racks=["K13 Y13 R10 R10 B9 B10 B11 B12 B13 R1", "", "", ""],
   steps=[open_(0, "K13 Y13 R10 R10 | B9 B10 B11 B12 B13"), discard(0, "R1"), draw(1)])
