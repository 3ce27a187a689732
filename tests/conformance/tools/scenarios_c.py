"""Scenarios for the scoring and preset points of issue 16 (136 on), registered by
make_scenarios.py. Expected results are worked out by hand from RULES.md and the seeds."""

from okeygen import P, add, discard, draw, finished, lay, open_, pile_empty, scenario
from scenarios_b import B10_13, EX05_OPEN, EX05_RACK, PAIRS10, PAIRS10_TILES, SEAT1_MELDER

DO = "discard_okey"

K9_13 = "K9 K10 K11 K12 K13"
Y9_13 = "Y9 Y10 Y11 Y12 Y13"

# ---------------------------------------------------------------------------------------------
# The discard that empties the pile is out of the rack before the racks are scored
# ---------------------------------------------------------------------------------------------

# Seat 0 opens K9-K13 + Y9-Y13 (110) and throws B3; it keeps R1 R2 R3 Y1 Y2 Y3 B1 B2 K1 K2 K3
# (6 + 6 + 3 + 6 = 21). The pile holds 4 tiles: seats 1-3 draw one each, seat 0 draws the last
# (B5, 26 in the rack) and discards K3, which empties the pile: its rack is now 21 - 3 + 5 = 23
# (scoring before the discard would count the K3 and give 26). The others never opened: 202.
scenario(
    "136_pile_out_an_opened_players_last_discard_is_not_scored",
    "the discard that empties the pile leaves the rack first: the opened discarder scores 23, not 26 with the K3 thrown away",
    racks=[f"{K9_13} {Y9_13} B3 R1 R2 R3 Y1 Y2 Y3 B1 B2 K1 K2 K3", "R5", "R6", "R7"],
    pile="Y4 B4 K4 B5",
    pile_len=4,
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "B3"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "R6"), draw(3), discard(3, "R7"),
        draw(0), discard(0, "K3"),
        draw(1, ok=False),
    ],
    end=pile_empty([23, 202, 202, 202]),
)

# Seat 0 opens with five pairs (R5 R5, Y5 Y5, B5 B5, K5 K5, R6 R6) and throws K12; it keeps
# B1 B2 B3 Y1 Y2 K1 K2 B7 Y7 K7 R3 = 36. It draws the last pile tile K9 (45) and discards K7:
# 45 - 7 = 38 left, doubled for a pair opener = 76 (90 if the K7 still counted).
scenario(
    "137_pile_out_a_pair_openers_last_discard_is_not_scored",
    "a pair opener empties the pile: 2 x the rack after the discard (2 x 38 = 76), not with the thrown K7 (90)",
    racks=["R5 R5 Y5 Y5 B5 B5 K5 K5 R6 R6 K12 B1 B2 B3 Y1 Y2 K1 K2 B7 Y7 K7 R3", "R8", "Y8", "B8"],
    pile="Y4 B4 K4 K9",
    pile_len=4,
    steps=[
        open_(0, "R5 R5 | Y5 Y5 | B5 B5 | K5 K5 | R6 R6"), discard(0, "K12"),
        draw(1), discard(1, "R8"), draw(2), discard(2, "Y8"), draw(3), discard(3, "B8"),
        draw(0), discard(0, "K7"),
    ],
    end=pile_empty([76, 202, 202, 202]),
)

# Indicator R9: R10 is the okey. Seat 0 opens (110), throws B3 and keeps R1 R2 R3 Y1 Y2 Y3 B1
# B2 K1 K2 (18) and the okey R10. It draws the last pile tile B5 and discards the okey: 101
# discard_okey (the hand does not finish), and the okey is no longer held, so the rack scores
# 18 + 5 = 23 with no +101 surcharge (124 if the discarded okey still counted).
scenario(
    "138_pile_out_with_an_okey_discard_the_okey_is_not_held",
    "an opened player empties the pile by discarding the okey: 101 discard_okey, and the rack scores 23 with no held-okey 101",
    racks=[f"{K9_13} {Y9_13} B3 R1 R2 R3 Y1 Y2 Y3 B1 B2 K1 K2 R10", "R5", "R6", "R7"],
    pile="Y4 B4 K4 B5",
    pile_len=4,
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "B3"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "R6"), draw(3), discard(3, "R7"),
        draw(0), discard(0, "R10", pen=[P(0, 101, DO)]),
    ],
    end=pile_empty([23, 202, 202, 202]),
)

# ---------------------------------------------------------------------------------------------
# solo (seed 003): RULES.md's m = 2^(d+o+p), a held okey 101 on top
# ---------------------------------------------------------------------------------------------

# Seed 003's table: "The player who went out | -101", "Went out with an okey as the last tile |
# -202", nothing for a direct finish or a pair opener: silent on d and p, so RULES.md's m applies
# whole. Each scenario keeps its former file name as the filler seed, so its racks are unchanged.
# Seat 0 lays 21 tiles at once and goes out with Y1: a direct finish, m = 2.
scenario(
    "139_solo_direct_finish_doubles",
    "solo (seed 003 is silent on a direct finish, so RULES.md's d applies): m = 2: -101 x 2 = -202; never opened 202 x 2 = 404",
    rules={"preset": "solo"},
    racks=[f"{EX05_RACK} Y1", "", "", ""],
    steps=[open_(0, EX05_OPEN), discard(0, "Y1")],
    end=finished(0, [-202, 404, 404, 404]),
    seed="139_solo_direct_finish_is_not_multiplied",
)

# The same direct finish with the okey as the last tile: d and o, m = 4.
scenario(
    "140_solo_direct_okey_finish_multiplies_by_4",
    "solo: a direct finish with the okey: d and o, m = 4: -101 x 4 = -404; never opened 202 x 4 = 808",
    rules={"preset": "solo"},
    racks=[f"{EX05_RACK} R10", "", "", ""],
    steps=[open_(0, EX05_OPEN), discard(0, "R10")],
    end=finished(0, [-404, 808, 808, 808]),
    seed="140_solo_direct_finish_with_the_okey_doubles_once",
)

# Seat 0 opens with ten pairs and goes out on its next turn with B1: p = 1, m = 2. Seat 1 (melds)
# keeps K1 K2 K3 B3 B4 B5 Y6 Y7 R6 R7 K5 = 49: 98. Seat 2 never opened: 404. Seat 3 (pairs) keeps
# K4 B2 K1 K2 K3 B3 R6 R7 B4 B5 = 37 and the okey R10, which costs 101 on top, never multiplied
# (RULES.md; seed 003 would count it 10 inside the sum): 2 x 37 x 2 + 101 = 249.
scenario(
    "141_solo_pair_finish_doubles_and_a_held_okey_costs_101",
    "solo: a pair opener goes out in a later turn (p): m = 2: -202; opened 49 x 2 = 98; never opened 404; pair opener 2 x 37 x 2 + 101 held okey = 249",
    rules={"preset": "solo"},
    racks=[f"{PAIRS10_TILES} B1 B2",
           SEAT1_MELDER,
           "Y12",
           "K6 K6 K7 K7 B6 B6 B7 B7 Y8 Y8 R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 Y11"],
    pile="K5 R12 B5 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | B9 B10 B11 B12 B13"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "K6 K6 | K7 K7 | B6 B6 | B7 B7 | Y8 Y8"), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "B1"),
    ],
    end=finished(0, [-202, 98, 404, 249]),
    seed="141_solo_pair_finish_is_not_multiplied",
)

# ---------------------------------------------------------------------------------------------
# penalties (seed 004): RULES.md's scoring, opened racks multiplied like the never-opened
# ---------------------------------------------------------------------------------------------

# Seat 0 opens on turn 0 (192) and goes out on turn 4 with the okey it draws: o = 1, m = 2. Seed
# 004 says the never-opened get "404 instead of 202" here, which is RULES.md's 202 x 2, and for
# opened racks "the total face value of the tiles left on their rack": RULES.md multiplies those
# by m too, and RULES.md stands. Seat 1 (melds) keeps Y1 Y2 Y3 B1 B3 K1 K2 K3 R6 R7 Y5 = 34: 68.
# Seat 2 (pairs) keeps Y4 B4 K5 B5 Y7 K7 K8 Y8 R8 R2 = 58 and an okey: 2 x 58 x 2 + 101 = 333.
# Seat 3 never opened: 404. The finisher: -101 x 2.
scenario(
    "142_penalties_okey_finish_doubles_opened_racks_too",
    "penalties (seed 004): an okey finish (m = 2) doubles opened racks too (RULES.md): -202; 34 x 2 = 68; pair opener 2 x 58 x 2 + 101 = 333; never opened 404",
    rules={"preset": "penalties"},
    racks=[f"{K9_13} {Y9_13} {B10_13} R11 R12 R13 R1 R2 R3 R4 B2",
           f"{K9_13} {Y9_13} Y1 Y2 Y3 B1 B3 K1 K2 K3 R6 R7 B6",
           "B7 B7 B8 B8 Y6 Y6 K6 K6 K4 K4 R10 Y4 B4 K5 B5 Y7 K7 K8 Y8 R8 B12",
           "R12"],
    pile="Y5 R2 R9 R10",
    steps=[
        open_(0, f"{K9_13} | {Y9_13} | {B10_13} | R11 R12 R13"), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {Y9_13}"), discard(1, "B6"),
        draw(2), open_(2, "B7 B7 | B8 B8 | Y6 Y6 | K6 K6 | K4 K4"), discard(2, "B12"),
        draw(3), discard(3, "R12"),
        draw(0), lay(0, "R1 R2 R3 R4"), discard(0, "R10"),
    ],
    end=finished(0, [-202, 68, 333, 404]),
    seed="142_penalties_okey_finish_doubles_only_the_never_opened",
)

# The hand of 141 at a penalties table: a pair opener goes out on a later turn, p = 1, m = 2: the
# never-opened seat 2 gets 404, seat 1 (melds) 49 x 2 = 98, seat 3 (pairs) 2 x 37 x 2 + 101 = 249
# (the held okey 101 on top, "never doubled"), the finisher -202.
scenario(
    "143_penalties_pair_finish_doubles_opened_racks_too",
    "penalties: a pair opener's finish (m = 2) doubles opened racks too (RULES.md): -202; 49 x 2 = 98; never opened 404; pair opener 2 x 37 x 2 + 101 = 249",
    rules={"preset": "penalties"},
    racks=[f"{PAIRS10_TILES} B1 B2",
           SEAT1_MELDER,
           "Y12",
           "K6 K6 K7 K7 B6 B6 B7 B7 Y8 Y8 R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 Y11"],
    pile="K5 R12 B5 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | B9 B10 B11 B12 B13"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "K6 K6 | K7 K7 | B6 B6 | B7 B7 | Y8 Y8"), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "B1"),
    ],
    end=finished(0, [-202, 98, 404, 249]),
    seed="143_penalties_pair_finish_doubles_only_the_never_opened",
)
