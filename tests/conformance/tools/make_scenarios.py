#!/usr/bin/env python3
"""Writes the project's conformance scenarios into tests/conformance/.

Each scenario states what RULES.md requires, worked out by hand (see the comments); nothing here
asks the engine. Run from anywhere: `python3 tests/conformance/tools/make_scenarios.py`.
Unless told otherwise the indicator is R9, so the okeys are the two R10 tiles and a false joker
(F) plays as R10.
"""

import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))

from okeygen import (P, add, cancelled, discard, draw, finished, in_progress, lay, open_,  # noqa: E402
                     pile_empty, ret, retrieve, scenario, take, write_all)

WO = "wrong_opening"
DO = "discard_okey"
DP = "discard_playable"
SDO = "side_discard_opening"
OR = "okey_retrieved"
TR = "table_rollback"

# ---------------------------------------------------------------------------------------------
# Deal, turn order, phases
# ---------------------------------------------------------------------------------------------

scenario(
    "001_first_player_has_no_draw_on_first_turn",
    "the first player's first turn has no draw: draw and take are rejected, a discard ends it",
    racks=["B2", "Y3", "", ""],
    steps=[draw(0, ok=False), take(0, ok=False), discard(0, "B2"), draw(1), discard(1, "Y3"), draw(2)],
    end=in_progress(),
)

scenario(
    "002_acting_out_of_turn_is_rejected",
    "only the seat on turn may act; play passes 0, 1, 2, 3",
    racks=["B2 B3", "Y3", "K5", ""],
    steps=[
        draw(1, ok=False), discard(2, "K5", ok=False), discard(0, "B2"),
        discard(0, "B3", ok=False), draw(2, ok=False), draw(3, ok=False),
        draw(1), discard(1, "Y3"), draw(2), discard(2, "K5"), draw(3),
    ],
    end=in_progress(),
)

scenario(
    "003_take_one_tile_first_and_only_one",
    "a turn starts with exactly one take: no discard, open or lay before it, no second take after it",
    racks=["B2", "Y3 K9 K10 K11", "", ""],
    steps=[
        discard(0, "B2"),
        discard(1, "Y3", ok=False),
        open_(1, "K9 K10 K11", ok=False),
        lay(1, "K9 K10 K11", ok=False),
        draw(1), draw(1, ok=False), take(1, ok=False),
        discard(1, "Y3"), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "004_first_player_can_be_seat_2",
    "with seat 2 first it holds 22 tiles and starts; play goes on 3, 0, 1, 2",
    first=2,
    racks=["K4", "R5", "B2 B6", "Y3"],
    steps=[
        draw(0, ok=False), discard(3, "Y3", ok=False), draw(2, ok=False),
        discard(2, "B2"), draw(3), discard(3, "Y3"), draw(0), discard(0, "K4"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "B6"),
    ],
    end=in_progress(),
)

# Indicator K13: the okey is K1 (13 -> 1). Y11 Y12 K1 must read 11-12-13 = 36 for the opening to
# reach 36 + 55 + 10 = 101. The second K1 discarded costs 101 and cannot be taken.
scenario(
    "005_indicator_13_makes_the_1_the_okey",
    "indicator K13: both K1 are okeys; Y11 Y12 K1 reads 11-12-13 and the opening is exactly 101",
    ind="K13",
    racks=["Y11 Y12 K1 B9 B10 B11 B12 B13 R1 R2 R3 R4 K1", "Y5", "", ""],
    steps=[
        open_(0, "Y11 Y12 K1 | B9 B10 B11 B12 B13 | R1 R2 R3 R4"),
        discard(0, "K1", pen=[P(0, 101, DO)]),
        take(1, ok=False), draw(1), discard(1, "Y5"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# False jokers
# ---------------------------------------------------------------------------------------------

scenario(
    "006_false_joker_is_not_wild",
    "a false joker plays only as the okey's face (R10): F K11 K12 is no meld, R8 R9 F R11 is",
    racks=["F K11 K12 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R8 R9 R11 B1 B2 B3 B4", "", "", ""],
    steps=[
        open_(0, "F K11 K12 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", ok=False),
        # 38 + 55 + 10 = 103
        open_(0, "R8 R9 F R11 | Y9 Y10 Y11 Y12 Y13 | B1 B2 B3 B4"),
        discard(0, "K11"),
    ],
    end=in_progress(),
)

scenario(
    "007_false_joker_in_a_set_and_two_false_jokers_no_set",
    "F stands as the red 10 of a set; two false jokers are two red 10s and make no set",
    racks=["F F Y10 B10 K10 Y11 Y12 Y13 K11 K12 K13 B2", "", "", ""],
    steps=[
        open_(0, "F F Y10 | Y11 Y12 Y13 | K11 K12 K13", ok=False),
        # 40 + 36 + 36 = 112
        open_(0, "F Y10 B10 K10 | Y11 Y12 Y13 | K11 K12 K13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "008_two_false_jokers_are_a_pair",
    "two false jokers are a pair: five pairs with F F open",
    racks=["F F Y2 Y2 B3 B3 K4 K4 B5 B5 K8", "", "", ""],
    steps=[open_(0, "F F | Y2 Y2 | B3 B3 | K4 K4 | B5 B5"), discard(0, "K8"), draw(1)],
    end=in_progress(),
)

scenario(
    "009_two_okeys_are_never_a_pair",
    "two okeys are no pair (rejected, no penalty); an okey with a real tile is",
    racks=["R10 R10 K7 Y2 Y2 B3 B3 K4 K4 B5 B5", "", "", ""],
    steps=[
        open_(0, "R10 R10 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5", ok=False),
        open_(0, "R10 K7 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5"),
        discard(0, "R10", pen=[P(0, 101, DO)]),
        take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

# Indicator B12: okey B13, F counts 13. Seat 0 keeps F R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3:
# 13 + 4 + 8 + 6 = 31. Seat 3's discard of the okey empties nothing but is the last discard before
# the empty pile: it still costs 101.
scenario(
    "010_false_joker_counts_the_okey_number_in_a_rack",
    "pile empty: a false joker left in an opened rack counts the okey's number (13)",
    ind="B12",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 F R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3 B3",
           "R5", "R6", "B13"],
    avoid="K8 Y8",
    pile_len=3,
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "B3"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "R6"), draw(3),
        discard(3, "B13", pen=[P(3, 101, DO)]),
        draw(0, ok=False),
    ],
    end=pile_empty([31, 202, 202, 202]),
)

# ---------------------------------------------------------------------------------------------
# Runs, sets, okey readings
# ---------------------------------------------------------------------------------------------

scenario(
    "011_run_12_13_1_is_not_a_run_1_2_3_is",
    "classic: 12-13-1 is no run (the opening is rejected), 1-2-3 is",
    racks=["B12 B13 B1 B2 B3 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R5", "", "", ""],
    steps=[
        open_(0, "B12 B13 B1 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "B1 B2 B3 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "R5"),
    ],
    end=in_progress(),
)

# 26 + 55 + 20 = 101.
scenario(
    "012_wrap_option_12_13_1_opens_with_the_1_worth_1",
    "run_wraps_12_13_1: B12 B13 B1 is worth 26; it ends at the 1 but grows at 11",
    rules={"run_wraps_12_13_1": True},
    racks=["B12 B13 B1 K9 K10 K11 K12 K13 R2 R3 R4 R5 R6 B2 B11 Y5", "", "", ""],
    steps=[
        open_(0, "B12 B13 B1 | K9 K10 K11 K12 K13 | R2 R3 R4 R5 R6"),
        add(0, 0, "B2", ok=False),
        add(0, 0, "B11"),
        discard(0, "Y5"),
    ],
    end=in_progress(),
)

# 26 + 36 + 38 = 100 < 101.
scenario(
    "013_wrapped_1_is_worth_1_so_100_is_a_wrong_opening",
    "run_wraps_12_13_1: B12 B13 B1 (26) + K11-13 (36) + Y8-11 (38) = 100 is a wrong opening",
    rules={"run_wraps_12_13_1": True},
    racks=["B12 B13 B1 K11 K12 K13 Y8 Y9 Y10 Y11 R5", "", "", ""],
    steps=[
        open_(0, "B12 B13 B1 | K11 K12 K13 | Y8 Y9 Y10 Y11", pen=[P(0, 101, WO)]),
        discard(0, "R5"),
    ],
    end=in_progress(),
)

scenario(
    "014_wrap_option_never_allows_13_1_2",
    "run_wraps_12_13_1: 13-1-2 is never a run; a 1 may be added after 13 but nothing after that 1",
    rules={"run_wraps_12_13_1": True},
    racks=["B13 B1 B2 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 K1 K2 R5", "", "", ""],
    steps=[
        open_(0, "B13 B1 B2 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        add(0, 0, "K1"),
        add(0, 0, "K2", ok=False),
        discard(0, "R5"),
    ],
    end=in_progress(),
)

scenario(
    "015_wrap_option_makes_a_1_after_13_playable",
    "run_wraps_12_13_1: a run ending in 13 takes a 1, so discarding that 1 costs 101 and it cannot be taken",
    rules={"run_wraps_12_13_1": True},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 K1", "", "", ""],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "K1", pen=[P(0, 101, DP)]),
        take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "016_without_wrap_a_1_after_13_is_not_playable",
    "classic: a 1 does not fit after 13, so its discard is free and the next player may take it",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 K1", "Y4", "", ""],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "K1"),
        take(1), ret(1), draw(1), discard(1, "Y4"),
    ],
    end=in_progress(),
)

# K11 K12 okey must read 11-12-13 (36): 36 + 55 + 10 = 101 exactly.
scenario(
    "017_okey_at_the_top_of_a_run_reads_13_and_stays_there",
    "K11 K12 okey reads 11-12-13 = 36 (opening exactly 101); it then grows at 10, never at 13/14",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 R4 K13 K10", "Y5", "", ""],
    avoid="K9",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | R1 R2 R3 R4"),
        add(0, 0, "K13", ok=False),
        add(0, 0, "K10"),
        # K13 fits nowhere now: no penalty, and seat 1 may take it.
        discard(0, "K13"),
        take(1), ret(1), draw(1), discard(1, "Y5"),
    ],
    end=in_progress(),
)

scenario(
    "018_okey_below_a_real_13_reads_11",
    "K12 K13 okey reads 11-12-13 (36, opening exactly 101); K10 then fits, K11 does not",
    racks=["K12 K13 R10 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 R4 K10 K11", "", "", ""],
    avoid="K9",
    steps=[
        open_(0, "K12 K13 R10 | Y9 Y10 Y11 Y12 Y13 | R1 R2 R3 R4"),
        add(0, 0, "K11", ok=False),
        add(0, 0, "K10"),
        discard(0, "K11"),
    ],
    end=in_progress(),
)

# K1 K2 okey can only be 1-2-3 (6); 6 + 55 + 40 = 101.
scenario(
    "019_okey_at_the_bottom_of_a_run_1_2_3",
    "K1 K2 okey reads 1-2-3 (no 0, no wrap); the run then takes K4",
    racks=["K1 K2 R10 B9 B10 B11 B12 B13 F Y10 B10 K10 K4 B2", "", "", ""],
    avoid="K4",
    steps=[
        open_(0, "K1 K2 R10 | B9 B10 B11 B12 B13 | F Y10 B10 K10"),
        add(0, 0, "K4"),
        discard(0, "K4", ok=False),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# Explicit R10=K10: 33 + 55 + 12 = 100 (left to itself the okey would read 13: 103).
scenario(
    "020_explicit_reading_fixes_the_okey_lower",
    "K11 K12 R10=K10 is worth 33, so with Y9-13 and three 4s the opening is 100: wrong opening",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 R4 Y4 B4 B2", "", "", ""],
    steps=[
        open_(0, "K11 K12 R10=K10 | Y9 Y10 Y11 Y12 Y13 | R4 Y4 B4", pen=[P(0, 101, WO)]),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# Indicator K6: okey K7. R13 B13 K7=Y13 is a set of 13s (39); 39 + 42 + 42 = 123.
scenario(
    "021_explicit_reading_K7_as_Y13_in_a_set",
    "okey K7 read explicitly as Y13 in a set; K13 is added, then Y13 takes the okey back",
    ind="K6",
    racks=["R13 B13 K7 Y9 Y10 Y11 Y12 B9 B10 B11 B12 K13 Y13 B2", "", "", ""],
    steps=[
        open_(0, "R13 B13 K7=Y13 | Y9 Y10 Y11 Y12 | B9 B10 B11 B12"),
        add(0, 0, "K13"),
        retrieve(0, 0, "Y13"),
        # the okey is back in the rack: discarding it costs 101
        discard(0, "K7", pen=[P(0, 101, DO)]),
    ],
    end=in_progress(),
)

scenario(
    "022_okey_in_a_set_stands_for_any_missing_colour",
    "R13 B13 K7=Y13: a real Y13 may still be added (the okey moves to black), and K13 then retrieves it",
    ind="K6",
    racks=["R13 B13 K7 Y9 Y10 Y11 Y12 B9 B10 B11 B12 Y13 Y13 K13 B2", "", "", ""],
    steps=[
        open_(0, "R13 B13 K7=Y13 | Y9 Y10 Y11 Y12 | B9 B10 B11 B12"),
        add(0, 0, "Y13"),
        retrieve(0, 0, "Y13", ok=False),
        retrieve(0, 0, "K13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "023_impossible_readings_are_rejected",
    "an okey reading that does not fit, or a reading on a real tile, is rejected without penalty",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R2", "", "", ""],
    steps=[
        open_(0, "K11 K12 R10=K9 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", ok=False),
        open_(0, "K11=K13 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", ok=False),
        open_(0, "K11 K12 R10=K13 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "R2"),
    ],
    end=in_progress(),
)

# K13 + two okeys: set 39 beats run 11-12-13 (36). 39 + 46 + 16 = 101; as a run it would be 98.
scenario(
    "024_tile_with_two_okeys_reads_as_the_set_worth_more",
    "K13 with two okeys reads as three 13s (39), not 11-12-13 (36): the opening is exactly 101",
    racks=["K13 R10 R10 Y10 Y11 Y12 Y13 R4 Y4 B4 K4 B2", "", "", ""],
    steps=[
        open_(0, "K13 R10 R10 | Y10 Y11 Y12 Y13 | R4 Y4 B4 K4"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "025_set_repeats_no_colour_and_has_at_most_4_tiles",
    "R5 R5 Y5 is no set; four colours plus an okey is no set; R5 Y5 B5 K5 is",
    racks=["R5 R5 Y5 B5 K5 R10 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B2", "", "", ""],
    steps=[
        open_(0, "R5 R5 Y5 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "R5 Y5 B5 K5 R10 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "R5 Y5 B5 K5 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "026_new_meld_over_5_tiles_rejected_at_opening",
    "an opening meld of 6 tiles is rejected; the same tiles as two runs open",
    racks=["K8 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B2", "", "", ""],
    steps=[
        open_(0, "K8 K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "K8 K9 K10 | K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "027_new_meld_over_5_rejected_when_laid_adding_grows_it",
    "after opening a 6-tile lay is rejected, a 5-tile lay is accepted and adding makes it 7",
    racks=["Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 K1 K2 K3 K4 K5 K6 K7 R2", "", "", ""],
    steps=[
        open_(0, "Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        lay(0, "K1 K2 K3 K4 K5 K6", ok=False),
        lay(0, "K1 K2 K3 K4 K5"),
        add(0, 2, "K6 K7"),
        discard(0, "R2"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Opening
# ---------------------------------------------------------------------------------------------

scenario(
    "028_meld_opening_of_exactly_101",
    "K9-13 (55) and B10-13 (46) are exactly 101: accepted",
    racks=["K9 K10 K11 K12 K13 B10 B11 B12 B13 Y2", "", "", ""],
    steps=[open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(0, "Y2"), draw(1)],
    end=in_progress(),
)

scenario(
    "029_wrong_opening_100_leaves_only_the_discard",
    "K8-12 and B8-12 are 100: 101 penalty, the tiles stay in the rack, only a discard is left",
    racks=["K8 K9 K10 K11 K12 B8 B9 B10 B11 B12 R1 R2 R3 B13", "", "", ""],
    steps=[
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12", pen=[P(0, 101, WO)]),
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12 | R1 R2 R3", ok=False),
        lay(0, "R1 R2 R3", ok=False),
        draw(0, ok=False),
        discard(0, "K8"),
        draw(1),
    ],
    end=in_progress(),
)

scenario(
    "030_pair_opening_with_five_pairs",
    "five pairs open whatever their points",
    racks=["B2", "R1 R1 Y2 Y2 B3 B3 K4 K4 R5 R5 K9", "", ""],
    steps=[
        discard(0, "B2"), draw(1),
        open_(1, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4 | R5 R5"),
        discard(1, "K9"), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "031_four_pairs_are_a_wrong_opening",
    "four valid pairs are below the pair threshold: 101 and only a discard is left",
    racks=["B2", "R1 R1 Y2 Y2 B3 B3 K4 K4 R5 R5 K9", "", ""],
    steps=[
        discard(0, "B2"), draw(1),
        open_(1, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4", pen=[P(1, 101, WO)]),
        open_(1, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4 | R5 R5", ok=False),
        discard(1, "K9"),
    ],
    end=in_progress(),
)

scenario(
    "032_melds_and_pairs_never_mix_in_an_opening",
    "an opening with runs and a pair is rejected without penalty",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R5 R5 B2", "", "", ""],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | R5 R5", ok=False),
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "R5"),
    ],
    end=in_progress(),
)

scenario(
    "033_invalid_meld_rejects_the_opening_without_penalty",
    "K9 K10 K12 is no run: the whole opening is rejected, no penalty, and the player may try again",
    racks=["K9 K10 K12 K13 K11 Y9 Y10 Y11 Y12 Y13 B2", "", "", ""],
    steps=[
        open_(0, "K9 K10 K12 | Y9 Y10 Y11 Y12 Y13", ok=False),
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# 22 tiles: the whole rack cannot be laid. 122 opens; B10-13 would empty the rack; B11-13 leaves
# B10, whose discard finishes (playable, but a finishing discard is free). Direct finish: m = 2.
scenario(
    "034_keep_one_tile_then_finish_with_a_playable_tile",
    "laying the whole rack is rejected; keeping one tile, the playable last discard finishes free",
    racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y10 Y11 Y12 Y13 K10 K11 K12 K13 B10 B11 B12 B13", "", "", ""],
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y10 Y11 Y12 Y13 | K10 K11 K12 K13 | B10 B11 B12 B13",
              ok=False),
        open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y10 Y11 Y12 Y13 | K10 K11 K12 K13"),
        lay(0, "B10 B11 B12 B13", ok=False),
        lay(0, "B11 B12 B13"),
        discard(0, "B10"),
        draw(1, ok=False),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)

scenario(
    "035_side_discard_must_be_in_the_opening",
    "an opening that leaves out the side discard taken this turn is rejected; with it, 10x8 to seat 0",
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y11 Y12 Y13 R11 R12 R13", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"), take(1),
        discard(1, "R11", ok=False),
        open_(1, "B9 B10 B11 B12 B13 | Y11 Y12 Y13 | R11 R12 R13", ok=False),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13 | Y11 Y12 Y13", pen=[P(0, 80, SDO)]),
        discard(1, "R11"),
    ],
    end=in_progress(),
)

scenario(
    "036_open_once_then_lay_add_retrieve_in_the_same_turn",
    "default act_after_opening_same_turn: after opening the same turn may lay, add and retrieve",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1 R2 R3 K10 K13 B2", "", "", ""],
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        open_(0, "R1 R2 R3", ok=False),
        lay(0, "R1 R2 R3"),
        add(0, 0, "K10"),
        retrieve(0, 0, "K13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "037_no_table_actions_in_the_opening_turn_when_option_off",
    "act_after_opening_same_turn off: lay, add and retrieve wait for the next turn",
    rules={"act_after_opening_same_turn": False},
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1 R2 R3 K10 K13 Y2 Y3", "R5", "R6", "R7"],
    avoid="K10 Y8 B8",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        lay(0, "R1 R2 R3", ok=False),
        add(0, 0, "K10", ok=False),
        retrieve(0, 0, "K13", ok=False),
        discard(0, "Y2"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "R6"), draw(3), discard(3, "R7"),
        draw(0),
        lay(0, "R1 R2 R3"),
        add(0, 0, "K10"),
        retrieve(0, 0, "K13"),
        discard(0, "Y3"),
    ],
    end=in_progress(),
)

scenario(
    "038_below_threshold_with_penalties_off_is_simply_rejected",
    "in_play_penalties off: a 100 opening is rejected (no penalty) and a better one is still allowed",
    rules={"in_play_penalties": False},
    racks=["K8 K9 K10 K11 K12 B8 B9 B10 B11 B12 R1 R2 R3 Y5", "", "", ""],
    steps=[
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12", ok=False),
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12 | R1 R2 R3"),
        discard(0, "Y5"),
    ],
    end=in_progress(),
)

scenario(
    "039_cannot_open_twice",
    "an opened player cannot open again",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 B2", "", "", ""],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        open_(0, "R1 R2 R3", ok=False),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Thresholds
# ---------------------------------------------------------------------------------------------

scenario(
    "040_raising_meld_threshold",
    "raising: 110 makes the bar 111 (110 is wrong), 111 makes it 112 (112 opens)",
    rules={"threshold": "raising"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1",
           "K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 Y2",
           "B9 B10 B11 B12 B13 R11 R12 R13 R2 R3 R4 R5 R6 Y3",
           "B9 B10 B11 B12 B13 R11 R12 R13 Y6 Y7 Y8 K2"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "R1"),
        draw(1), open_(1, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13", pen=[P(1, 101, WO)]), discard(1, "Y2"),
        draw(2), open_(2, "B9 B10 B11 B12 B13 | R11 R12 R13 | R2 R3 R4 R5 R6"), discard(2, "Y3"),
        draw(3), open_(3, "B9 B10 B11 B12 B13 | R11 R12 R13 | Y6 Y7 Y8"), discard(3, "K2"),
    ],
    end=in_progress(),
)

scenario(
    "041_raising_pair_threshold",
    "raising: 6 pairs make the pair bar 7 (6 is wrong), 7 pairs make it 8 (7 is wrong)",
    rules={"threshold": "raising"},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 K13",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 K12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7 K11",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K6 K6 K7 K7 Y13"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"), discard(0, "K13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5 | Y6 Y6", pen=[P(1, 101, WO)]),
        discard(1, "K12"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5 | B6 B6 | B7 B7"), discard(2, "K11"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5 | K6 K6 | K7 K7", pen=[P(3, 101, WO)]),
        discard(3, "Y13"),
    ],
    end=in_progress(),
)

scenario(
    "042_raising_meld_and_pair_thresholds_rise_independently",
    "raising: a 120 meld opening leaves 5 pairs enough; the 5-pair opening leaves 120 too little",
    rules={"threshold": "raising"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 R4 B1",
           "B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B13",
           "K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 R4 B12",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 B11"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | R1 R2 R3 R4"), discard(0, "B1"),
        draw(1), open_(1, "B2 B2 | B3 B3 | B4 B4 | B5 B5 | B6 B6"), discard(1, "B13"),
        draw(2), open_(2, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | R1 R2 R3 R4", pen=[P(2, 101, WO)]),
        discard(2, "B12"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5", pen=[P(3, 101, WO)]), discard(3, "B11"),
    ],
    end=in_progress(),
)

# Seat 0 opens 110: seats 1, 3 need 111. Seat 1 opens 115: seats 0, 2 need 116.
# Seat 2's 112 is wrong (116); seat 3's 111 opens (its partner's 115 does not raise it).
scenario(
    "043_raising_with_partners_raises_only_the_opponents",
    "raising + partners: each opening raises only the other team's bar",
    rules={"threshold": "raising", "partners": True},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B1",
           "B9 B10 B11 B12 B13 R11 R12 R13 R7 R8 R9 B2",
           "B9 B10 B11 B12 B13 R11 R12 R13 Y6 Y7 Y8 B3",
           "K9 K10 K11 K12 K13 Y10 Y11 Y12 Y13 R1 R2 R3 R4 B4"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "B1"),
        draw(1), open_(1, "B9 B10 B11 B12 B13 | R11 R12 R13 | R7 R8 R9"), discard(1, "B2"),
        draw(2), open_(2, "B9 B10 B11 B12 B13 | R11 R12 R13 | Y6 Y7 Y8", pen=[P(2, 101, WO)]), discard(2, "B3"),
        draw(3), open_(3, "K9 K10 K11 K12 K13 | Y10 Y11 Y12 Y13 | R1 R2 R3 R4"), discard(3, "B4"),
    ],
    end=in_progress(),
)

scenario(
    "044_raising_with_partners_partner_opening_does_not_raise",
    "raising + partners: after seat 0's 110 its partner opens 101; seat 3 needs 111, so 110 is wrong",
    rules={"threshold": "raising", "partners": True},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B1",
           "B2",
           "K9 K10 K11 K12 K13 B10 B11 B12 B13 B3",
           "Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 B4"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"), discard(0, "B1"),
        draw(1), discard(1, "B2"),
        draw(2), open_(2, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(2, "B3"),
        draw(3), open_(3, "Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", pen=[P(3, 101, WO)]), discard(3, "B4"),
    ],
    end=in_progress(),
)

scenario(
    "045_raising_with_partners_pairs",
    "raising + partners: 6 pairs by seat 0 make 7 the bar for seats 1 and 3 only",
    rules={"threshold": "raising", "partners": True},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 B13",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 B12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B11",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K6 K6 K7 K7 B10"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"), discard(0, "B13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5 | Y6 Y6", pen=[P(1, 101, WO)]),
        discard(1, "B12"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(2, "B11"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5 | K6 K6 | K7 K7"), discard(3, "B10"),
    ],
    end=in_progress(),
)

scenario(
    "046_standard_thresholds_never_rise",
    "standard: after a 146 opening 101 still opens, and after 6 pairs 5 pairs still open",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 R1",
           "K9 K10 K11 K12 K13 B10 B11 B12 B13 R2",
           "R3 R3 R4 R4 R5 R5 R6 R6 R7 R7 R8 R8 Y2",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 Y3"],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13"), discard(0, "R1"),
        draw(1), open_(1, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(1, "R2"),
        draw(2), open_(2, "R3 R3 | R4 R4 | R5 R5 | R6 R6 | R7 R7 | R8 R8"), discard(2, "Y2"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5"), discard(3, "Y3"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Cancellation
# ---------------------------------------------------------------------------------------------

scenario(
    "047_all_four_pair_openings_cancel_the_hand",
    "the fourth pair opening cancels the hand at once: its 20x charge is not written, nothing more can be done",
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R10",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 K13",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 K12",
           "K12 K1 K1 K2 K2 K3 K3 K4 K4"],
    avoid="",
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "R10", pen=[P(0, 101, DO)]),
        take(1, ok=False), draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"), discard(1, "K13"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(2, "K12"),
        take(3), open_(3, "K12 K12 | K1 K1 | K2 K2 | K3 K3 | K4 K4"),
        discard(3, "K13", ok=False),
        draw(0, ok=False),
    ],
    end=cancelled(),
)

scenario(
    "048_three_pair_openings_and_a_wrong_fourth_do_not_cancel",
    "a fourth pair opening below the bar is a wrong opening, not a cancellation",
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K13",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 K12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 K11",
           "K1 K1 K2 K2 K3 K3 K4 K4 B13"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "K13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"), discard(1, "K12"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(2, "K11"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4", pen=[P(3, 101, WO)]), discard(3, "B13"),
        draw(0),
    ],
    end=in_progress(),
)

if __name__ == "__main__":
    import scenarios_b  # noqa: F401  (registers the rest)
    import scenarios_c  # noqa: F401
    import scenarios_d  # noqa: F401
    import scenarios_e  # noqa: F401
    import scenarios_f  # noqa: F401
    import scenarios_g  # noqa: F401
    import scenarios_h  # noqa: F401
    import scenarios_i  # noqa: F401
    import scenarios_j  # noqa: F401
    import scenarios_k  # noqa: F401
    here = Path(__file__).resolve().parent.parent
    print(write_all(here), "scenarios written")
