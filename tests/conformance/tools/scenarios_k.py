"""Scenarios that pin what the presets leave to RULES.md (286 on): `yudum` is a standard table unless
it picks raising, and a raising table raises the pair bar too; under `solo` a held okey costs 101 on
top at a finish and at a pile-out (a false joker counts the okey's number); under `penalties` a
direct finish scores opened opponents rack x m (+ 101 per held okey) and the never-opened 202 x m.
Where a seed disagrees with RULES.md, RULES.md stands; where a seed is silent, RULES.md's rule
applies. Registered by make_scenarios.py. Expected results are worked out by hand from RULES.md.

Every tile a scored rack keeps is named, so no score depends on filler tiles. Indicator R9 (okeys
R10, F plays as R10) throughout.
"""

from okeygen import P, discard, draw, finished, in_progress, lay, open_, pile_empty, scenario
from scenarios_b import SEAT1_DIRECT, SEAT1_DIRECT_OPEN, WO

# ---------------------------------------------------------------------------------------------
# yudum: standard by default, raising when the table picks it
# ---------------------------------------------------------------------------------------------

# Seed 001 offers "Variant: standard or raising" as the table creator's choice; the preset takes
# the first ("At a raising table ..." is the other). RULES.md `standard`: "101 points and 5 pairs
# all hand". Seat 0 opens K9-K13 (55) + B8-B12 (50) = 105; seat 1 opens Y9-Y13 (55) + B10-B13
# (46) = 101; seat 2 opens 6 pairs; seat 3 opens 5 pairs. Nothing is a wrong opening.
scenario(
    "286_yudum_default_threshold_is_standard_101_after_105_and_5_pairs_after_6",
    "yudum with no threshold option is standard: after a 105 opening 101 opens; after 6 pairs 5 pairs open",
    rules={"preset": "yudum"},
    racks=["K9 K10 K11 K12 K13 B8 B9 B10 B11 B12 Y1",
           "Y9 Y10 Y11 Y12 Y13 B10 B11 B12 B13 Y2",
           "R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 Y3",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 Y4"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B8 B9 B10 B11 B12"), discard(0, "Y1"),
        draw(1), open_(1, "Y9 Y10 Y11 Y12 Y13 | B10 B11 B12 B13"), discard(1, "Y2"),
        draw(2), open_(2, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"), discard(2, "Y3"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5"), discard(3, "Y4"),
        draw(0),
    ],
    end=in_progress(),
)

# RULES.md `raising`: "an accepted pair opening of n pairs makes the pair threshold at least n+1".
# Seat 0's 5 pairs make the bar 6: seat 1's 5 pairs are a wrong opening (101). Seat 2's 6 pairs
# open and make it 7: seat 3's 6 pairs are wrong (101).
scenario(
    "287_yudum_raising_after_5_pairs_the_next_pair_opening_needs_6",
    "yudum at a raising table: after 5 pairs the next pair opening needs 6 (5 is a wrong opening); 6 pairs open and make the bar 7, so another 6 are wrong",
    rules={"preset": "yudum", "threshold": "raising"},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 Y13",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 Y11",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K6 K6 Y10"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "Y13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5", pen=[P(1, 101, WO)]), discard(1, "Y12"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5 | B6 B6"), discard(2, "Y11"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5 | K6 K6", pen=[P(3, 101, WO)]),
        discard(3, "Y10"),
        draw(0),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# solo: a held okey costs 101 on top, a false joker counts the okey's number
# ---------------------------------------------------------------------------------------------

# Seed 003 counts "Okeys and false jokers left in hand ... as the okey's number"; RULES.md: "A held
# okey counts 101 instead of its number and is never multiplied ... A false joker counts the okey's
# number." RULES.md stands for the okey; the false joker agrees.
# Seat 0 opens K9-K13 + Y9-Y13 (110) on turn 0; on turn 4 (solo: not in the opening turn) it lays
# R1-R4, B1-B4 and K1-K3 and goes out with the drawn B7: d = 0, o = 0, p = 0, m = 1: -101.
# Seat 1 opens B9-B13 (55) + R11-R13 (36) + Y6-Y8 (21) = 112 and keeps R10 F R5 R6 B5 K4 K5 Y2 K6
# and the drawn Y1: F 10 + 5+6+5+4+5+2+6+1 = 44 -> 44 + 101 = 145.
# Seat 2 never opens: 202.
# Seat 3 opens five pairs and keeps R10 K10 B10 R12 Y12 K11 B11 R2 B2 Y2 and the drawn K5:
# 10+10+12+12+11+11+2+2+2+5 = 77 -> 2 x 77 + 101 = 255.
scenario(
    "288_solo_finish_held_okeys_cost_101_a_false_joker_counts_10",
    "solo: a meld opener goes out in a later turn (m = 1): -101; a held okey costs 101 on top (RULES.md), a false joker counts 10: meld opener 44 + 101 = 145; never opened 202; pair opener 2 x 77 + 101 = 255",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 R4 B1 B2 B3 B4 K1 K2 K3 Y5",
           "B9 B10 B11 B12 B13 R11 R12 R13 Y6 Y7 Y8 R10 F R5 R6 B5 K4 K5 Y2 K6 B6",
           "",
           "R7 R7 R8 R8 Y3 Y3 Y4 Y4 B8 B8 R10 K10 B10 R12 Y12 K11 B11 R2 B2 Y2 K4"],
    pile="Y1 K7 K5 B7",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "Y5"),
        draw(1), open_(1, "B9 B10 B11 B12 B13 | R11 R12 R13 | Y6 Y7 Y8"), discard(1, "B6"),
        draw(2), discard(2, "K7"),
        draw(3), open_(3, "R7 R7 | R8 R8 | Y3 Y3 | Y4 Y4 | B8 B8"), discard(3, "K4"),
        draw(0), lay(0, "R1 R2 R3 R4 | B1 B2 B3 B4 | K1 K2 K3"), discard(0, "B7"),
    ],
    end=finished(0, [-101, 145, 202, 255]),
)

# The pile runs out (m = 1) after seat 3 discards the last pile tile.
# Seat 0 opens K9-K13 + Y9-Y13 (110) and keeps R10 F R1 R2 B3 B4 K5 K6 Y7 Y8 K1:
# F 10 + 1+2+3+4+5+6+7+8+1 = 47 -> 47 + 101 = 148.
# Seat 1 opens five pairs and keeps R10 R3 R4 B1 B2 Y4 K3 K4 R5 B8 R6: 3+4+1+2+4+3+4+5+8+6 = 40
# -> 2 x 40 + 101 = 181. Seats 2 and 3 never open: 202.
scenario(
    "289_solo_pile_out_held_okeys_cost_101_a_false_joker_counts_10",
    "solo pile-out (m = 1): a held okey costs 101 on top (RULES.md, not seed 003's okey number), a false joker counts 10: meld opener 47 + 101 = 148; pair opener 2 x 40 + 101 = 181; never opened 202",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R10 F R1 R2 B3 B4 K5 K6 Y7 Y8 K1 B12",
           "B5 B5 B6 B6 Y2 Y2 Y3 Y3 K2 K2 R10 R3 R4 B1 B2 Y4 K3 K4 R5 B8 R6",
           "", ""],
    pile="R12 B13 Y1",
    pile_len=3,
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "B12"),
        draw(1), open_(1, "B5 B5 | B6 B6 | Y2 Y2 | Y3 Y3 | K2 K2"), discard(1, "R12"),
        draw(2), discard(2, "B13"),
        draw(3), discard(3, "Y1"),
    ],
    end=pile_empty([148, 181, 202, 202]),
)

# ---------------------------------------------------------------------------------------------
# penalties: a direct finish is scored by RULES.md
# ---------------------------------------------------------------------------------------------

# Seed 004's "Direct finish: every opponent gets 404, or 808 if the final discard is the okey"
# contradicts RULES.md for opened opponents, so RULES.md stands (its 202 x 2 = 404 for the
# never-opened agrees). Seat 2 deals: 2, 3, 0, 1.
# Seat 2 opens five pairs and keeps R10 F B6 B7 Y2 Y3 Y4 K2 K3 K4 B2: F 10 + 6+7+2+3+4+2+3+4+2
# = 43 -> 2 x 43 x 2 + 101 = 273.
# Seat 3 never opens: 202 x 2 = 404.
# Seat 0 opens K9-K13 + Y9-Y13 (110) and keeps R10 R2 R3 R4 Y5 B8 K8 R7 R8 Y3 and the drawn Y8:
# 2+3+4+5+8+8+7+8+3+8 = 56 -> 56 x 2 + 101 = 213.
# Seat 1 draws K3, opens B1-B5 (15) + R1-R5 (15) + B9-B13 (55) + R11-R13 (36) + K1-K3 (6) = 127 and
# discards Y1, its last tile, in the same turn: d = 1, o = 0, p = 0, m = 2: -202.
scenario(
    "290_penalties_direct_finish_opened_racks_x2_plus_101_per_okey_never_opened_404",
    "penalties: a direct finish (m = 2) scores every opponent by RULES.md, not seed 004's flat 404: meld opener 56 x 2 + 101 held okey = 213; pair opener 2 x 43 x 2 + 101 = 273 (F counts 10); never opened 202 x 2 = 404; finisher -202",
    rules={"preset": "penalties"},
    first=2,
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R10 R6 R2 R3 R4 Y5 B8 K8 R7 R8 Y3",
           f"{SEAT1_DIRECT} Y1",
           "K5 K5 K6 K6 K7 K7 Y6 Y6 Y7 Y7 R10 F B6 B7 Y2 Y3 Y4 K2 K3 K4 B2 Y8",
           ""],
    pile="B13 Y8 K3",
    steps=[
        open_(2, "K5 K5 | K6 K6 | K7 K7 | Y6 Y6 | Y7 Y7"), discard(2, "Y8"),
        draw(3), discard(3, "B13"),
        draw(0), open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "R6"),
        draw(1), open_(1, SEAT1_DIRECT_OPEN), discard(1, "Y1"),
    ],
    end=finished(1, [213, -202, 273, 404]),
)
