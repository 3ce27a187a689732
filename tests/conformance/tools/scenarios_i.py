"""Scenarios translated from other 101 Okey engines' test suites (scalaokey, okey101 engines in Go
and TypeScript), expected results worked out from RULES.md (249 on). Registered by
make_scenarios.py. Each scenario's comment names the repository and the test it comes from; a test
of a single function (a meld check, a lay-off check) is played here as a hand, with the opening
and the turns that function needs around it.

As in scenarios_g.py, each scenario's filler tiles are drawn with the seed the audit's generator
used (the audit's own file name, `scalaokey_...`, `charlie1908_...`, `iltan987_...`,
`tahatsahin_...`), so the racks are exactly the audited ones. Every scenario here ends in
progress, so no score depends on filler tiles. The indicator follows the source test where it has
one (R2 for scalaokey's GrouperTest: okey R3, F plays as R3), so each scenario names its own.
"""

from okeygen import SCENARIOS, P, add, discard, draw, in_progress, open_, retrieve, scenario
from scenarios_b import DP, OR, WO


def sc(file, seed, name, **kw):
    """Registers `file` with the racks the audit drew for `seed`."""
    scenario(seed, name, **kw)
    SCENARIOS[-1]["file"] = file


# ---------------------------------------------------------------------------------------------
# eguneys/scalaokey: GrouperTest, DropOpensTest, DropOpenPairsTest
# ---------------------------------------------------------------------------------------------

# eguneys/scalaokey GrouperTest "dont group 13 1 series", "dont group bad series", "dont group bad
# rainbow series", "dont group bad series with okey", "dont group bad rainbow with okey".
# Indicator R2: okey R3. RULES.md "Melds": "1 is only low (1-2-3 is a run, 12-13-1 is not ...)",
# "Run: 3 or more consecutive numbers of one colour", "Set: the same number in 3 or 4 different
# colours"; "Opening": "any meld not a valid run/set/pair ... -> rejected (nothing changes, no
# penalty)", while "valid melds ... below the threshold -> wrong opening": K10-K13 = 46 costs 101.
sc(
    "249_bad_runs_and_sets_are_rejected_a_valid_run_below_101_is_a_wrong_opening",
    "scalaokey_GrouperTest_dont_group_bad_series_rainbow_13_1",
    "13-1, gaps, mixed colours, repeated colours and misused okeys are no meld (rejected, no penalty); K10-K13 alone (46) is a wrong opening",
    ind="R2",
    racks=["K10 K11 K12 K13 K1 K2 K4 Y3 K10 B10 B10 R10 Y1 Y10 Y10 R3 B1 Y2", "", "", ""],
    avoid="",
    steps=[
        open_(0, "K10 K11 K12 K13 K1", ok=False),
        open_(0, "K1 K2 K4", ok=False),
        open_(0, "K1 K2 Y3", ok=False),
        open_(0, "K10 B10 K10", ok=False),
        open_(0, "K10 B10 R10 B10", ok=False),
        open_(0, "K10 B10 R10 Y1", ok=False),
        open_(0, "Y10 R3 Y10", ok=False),
        open_(0, "Y10 K1 R3", ok=False),
        open_(0, "R3 Y10 K10 B1", ok=False),
        open_(0, "K10 K11 K12 K13", pen=[P(0, 101, WO)]),
        discard(0, "Y2"),
    ],
    end=in_progress(),
)


# eguneys/scalaokey GrouperTest "group fake with okey" (R1 R3 F, value 6). Indicator R2: okey R3,
# and RULES.md "Tiles and deal": "A false joker is not wild: it is a plain tile with the okey's
# colour and number" - F is R3, so the okey between R1 and F reads R2 ("An okey stands in for any
# one tile of a run"): 1 + 2 + 3 = 6; 6 + K9-K13 (55) + Y10 B10 K10 R10 (40) = 101 opens.
sc(
    "250_okey_between_a_1_and_a_false_joker_reads_2_for_an_exact_101",
    "scalaokey_GrouperTest_group_fake_with_okey_R1_okey_F",
    "okey R3, F plays as R3: R1 okey F reads R1 R2 R3 = 6, and 6 + 55 + 40 opens at exactly 101",
    ind="R2",
    racks=["R1 R3 F K9 K10 K11 K12 K13 Y10 B10 K10 R10 Y2", "", "", ""],
    steps=[open_(0, "R1 R3 F | K9 K10 K11 K12 K13 | Y10 B10 K10 R10"), discard(0, "Y2")],
    end=in_progress(),
)


# eguneys/scalaokey GrouperTest "group fake with okey" (B3 R3 F, value 9). Indicator R2: F is a
# red 3, the okey stands for a yellow or black 3 (RULES.md "Set: the same number in 3 or 4
# different colours"): 9; 9 + K9-K13 (55) + Y4-Y7 (22) + B4-B6 (15) = 101 opens.
sc(
    "251_set_of_a_3_an_okey_and_a_false_joker_as_red_3_for_an_exact_101",
    "scalaokey_GrouperTest_group_fake_with_okey_set_B3_okey_F",
    "okey R3, F plays as R3: B3 okey F is a set of 3s worth 9, and 9 + 55 + 22 + 15 opens at exactly 101",
    ind="R2",
    racks=["B3 R3 F K9 K10 K11 K12 K13 Y4 Y5 Y6 Y7 B4 B5 B6 Y2", "", "", ""],
    steps=[open_(0, "B3 R3 F | K9 K10 K11 K12 K13 | Y4 Y5 Y6 Y7 | B4 B5 B6"), discard(0, "Y2")],
    end=in_progress(),
)


# eguneys/scalaokey GrouperTest "group fake with okey" (F R3 R5, value 12). Indicator R2: F is R3
# (RULES.md "Tiles and deal"), the okey between it and R5 reads R4: 3 + 4 + 5 = 12;
# 12 + K9-K13 (55) + Y7-Y10 (34) = 101 opens.
sc(
    "252_false_joker_okey_and_5_read_3_4_5_for_an_exact_101",
    "scalaokey_GrouperTest_group_fake_with_okey_F_okey_R5",
    "okey R3, F plays as R3: F okey R5 reads R3 R4 R5 = 12, and 12 + 55 + 34 opens at exactly 101",
    ind="R2",
    racks=["F R3 R5 K9 K10 K11 K12 K13 Y7 Y8 Y9 Y10 B2", "", "", ""],
    steps=[open_(0, "F R3 R5 | K9 K10 K11 K12 K13 | Y7 Y8 Y9 Y10"), discard(0, "B2")],
    end=in_progress(),
)


# eguneys/scalaokey GrouperTest "drops fake on open serie" (F appended to K3 Y3 B3 and below
# R4 R5 R6) and "dont drop bad serie" (nothing more on a set of four colours). Indicator R2: F is
# R3. RULES.md "After opening": "Add tiles to any table meld (anyone's): at the ends of a run, or
# the missing colours of a set" - F is the set's missing red and fits below R4. The set then has
# all four colours: a second K3 is refused. Opening K3 Y3 B3 (9) + R4-R6 (15) + 55 + 55 = 134.
sc(
    "253_false_joker_added_to_a_set_and_below_a_run_then_the_full_set_takes_nothing",
    "scalaokey_GrouperTest_drops_fake_on_open_serie",
    "okey R3: F (a red 3) is added to K3 Y3 B3 and below R4 R5 R6; the set, now four colours, refuses a second K3",
    ind="R2",
    racks=["K3 Y3 B3 R4 R5 R6 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 F F K3 B1", "", "", ""],
    steps=[
        open_(0, "K3 Y3 B3 | R4 R5 R6 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        add(0, 0, "F"),
        add(0, 1, "F"),
        add(0, 0, "K3", ok=False),
        discard(0, "B1"),
    ],
    end=in_progress(),
)


# eguneys/scalaokey DropOpensTest "allow drop open replace okey", "not allow drop open series if
# bad serie", "allow drop open series if opened pairs", "not allow drop open series if not opened"
# (and "allow drop open series on new open" for a tile put below a run, here the false joker).
# Indicator R13: okey R1, F plays as R1. Seat 0 opens Y9 okey Y11 (the okey reads Y10: 30) + K9-K13
# (55) + B5 okey B7 (18) = 103; seat 1 opens B9-B13 + K4-K8 + Y2-Y5 + R2 R3 R4 = 108.
# RULES.md "After opening": adds go "at the ends of a run" - Y13 does not fit Y9-Y11; "Retrieve an
# okey ... in a run, the tile at its place ... If the okey was placed by another player, that
# player gets 101" - Y10 retrieves it, 101 to seat 0; F (an R1) fits below R2 R3 R4; "Nobody adds,
# lays or retrieves before opening" - seat 2's B6 is refused until it has opened with 5 pairs, and
# then accepted (101 to seat 0 again): a pair opener may retrieve.
sc(
    "254_okey_retrieved_by_a_meld_opener_and_by_a_pair_opener_never_before_opening",
    "scalaokey_DropOpensTest_replace_okey_fake_append_pair_opener",
    "okey R1: Y13 does not fit Y9 okey Y11, Y10 retrieves the okey (101 to its placer), F goes below R2 R3 R4; an unopened seat cannot retrieve, once opened with pairs it can",
    ind="R13",
    racks=["Y9 R1 Y11 K9 K10 K11 K12 K13 B5 R1 B7 R5",
           "B9 B10 B11 B12 B13 K4 K5 K6 K7 K8 Y2 Y3 Y4 Y5 R2 R3 R4 Y10 Y13 F R12",
           "K2 K2 Y7 Y7 B2 B2 R7 R7 B1 B1 B6 Y13", ""],
    avoid="Y12 Y8 Y1 Y6 B4 B8 K3 R5",
    steps=[
        open_(0, "Y9 R1 Y11 | K9 K10 K11 K12 K13 | B5 R1 B7"),
        discard(0, "R5"),
        draw(1),
        open_(1, "B9 B10 B11 B12 B13 | K4 K5 K6 K7 K8 | Y2 Y3 Y4 Y5 | R2 R3 R4"),
        add(1, 0, "Y13", ok=False),
        retrieve(1, 0, "Y10", pen=[P(0, 101, OR)]),
        add(1, 6, "F"),
        discard(1, "R12"),
        draw(2),
        retrieve(2, 2, "B6", ok=False),
        open_(2, "K2 K2 | Y7 Y7 | B2 B2 | R7 R7 | B1 B1"),
        retrieve(2, 2, "B6", pen=[P(0, 101, OR)]),
        discard(2, "Y13"),
    ],
    end=in_progress(),
)


# eguneys/scalaokey DropOpenPairsTest "allow drop open pair on new open" (the opener takes its own
# okey back out of R3 okey with R3) and "allow drop open pair on old open" (another opened player
# takes the okey out of a pair with the twin). Indicator R13: okey R1. RULES.md "After opening":
# "In a pair, it is retrieved with the twin of the pair's real tile"; "If the okey was placed by
# another player, that player gets 101" - nothing for seat 0's own okey (in its opening turn,
# `act_after_opening_same_turn` on), 101 to seat 0 when seat 1 (opened 110) supplies Y2.
sc(
    "255_okey_in_a_pair_retrieved_by_its_placer_free_by_another_player_101",
    "scalaokey_DropOpenPairsTest_replace_okey_in_pairs",
    "okey R1: a pair opener takes its own okey back out of a pair with R3 (free); a meld opener takes the other with Y2 (101 to the pair opener)",
    ind="R13",
    racks=["R2 R2 R3 R1 Y2 R1 B5 B5 K6 K6 R3 Y9",
           "K9 K10 K11 K12 K13 B9 B10 B11 B12 B13 Y2 R12", "", ""],
    steps=[
        open_(0, "R2 R2 | R3 R1 | Y2 R1 | B5 B5 | K6 K6"),
        retrieve(0, 1, "R3"),
        discard(0, "Y9"),
        draw(1),
        open_(1, "K9 K10 K11 K12 K13 | B9 B10 B11 B12 B13"),
        retrieve(1, 2, "Y2", pen=[P(0, 101, OR)]),
        discard(1, "R12"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# charlie1908/okey101 (Go): validator tests
# ---------------------------------------------------------------------------------------------

# charlie1908/okey101 TestCanOpenTilesWithOkeyAndJoker_Valid (indicator blue 11: okey B12, the
# false joker a blue 12). RULES.md "Tiles and deal": F is a B12; "Melds": the okey in B10 B11 F B13
# can only read B9 (nothing above 13): 9 + 10 + 11 + 12 + 13 = 55, a 5-tile new meld ("at most 5
# tiles"); Y12 F R12 is a set of 12s with F as the blue (36). 55 + Y6 R6 K6 (18) + R5 Y5 B5 (15)
# + 36 + R7-R9 (24) = 148 opens.
sc(
    "256_run_with_an_okey_and_a_false_joker_and_a_set_with_the_other_false_joker_open_148",
    "charlie1908_TestCanOpenTilesWithOkeyAndJoker_Valid",
    "okey B12: B10 B13 F B11 okey is B9-B13 (55), Y12 F R12 a set of 12s (36); with 6s, 5s and R7-R9 the opening is 148",
    ind="B11",
    racks=["B10 B13 F B11 B12 Y6 R6 K6 R5 Y5 B5 Y12 F R12 R7 R8 R9 K2", "", "", ""],
    steps=[
        open_(0, "B10 B13 F B11 B12 | Y6 R6 K6 | R5 Y5 B5 | Y12 F R12 | R7 R8 R9"),
        discard(0, "K2"),
    ],
    end=in_progress(),
)


# charlie1908/okey101 TestCanThrowingTileBeAddedToOpponentSets_ValidAddition_TotalOver101 (K13
# completes R13 B13 Y13) and TestCanThrowingTileBeAddedToOpponentSets_InvalidAddition_TotalOver101
# (Y7 fits nothing); K12 on the K8-K11 run of the same table. RULES.md "Penalties during play":
# `discard_playable` - "discarding a tile that a table meld could take"; "A tile is playable when
# some table meld could take it by an add, whoever discards it, opened or not". Seat 0 opens
# R13 B13 Y13 (39) + R11-R13 (36) + K8-K11 (38) = 113.
sc(
    "257_discards_that_complete_a_set_or_extend_a_run_are_charged_one_that_fits_nothing_is_not",
    "charlie1908_TestCanThrowingTileBeAddedToOpponentSets",
    "K13 completes R13 B13 Y13 (101 to its opened discarder); Y7 fits nothing; K12 extends K8-K11 (101 to an unopened discarder)",
    racks=["R13 B13 Y13 R11 R12 R13 K8 K9 K10 K11 K13", "Y7", "K12", ""],
    avoid="K7 Y6 Y8",
    steps=[
        open_(0, "R13 B13 Y13 | R11 R12 R13 | K8 K9 K10 K11"),
        discard(0, "K13", pen=[P(0, 101, DP)]),
        draw(1), discard(1, "Y7"),
        draw(2), discard(2, "K12", pen=[P(2, 101, DP)]),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# iltan987/okey101 (TypeScript): solver and planOpened tests
# ---------------------------------------------------------------------------------------------

# iltan987/okey101 solve, with 12-13-1 runs allowed: "lets an okey be the 1 after 13" (R12 R13 K1
# with indicator K13 scores 36). RULES.md "Melds": with `run_wraps_12_13_1` a run may end
# "...-12-13-1, that 1 worth 1"; "When an okey's reading is not forced by its neighbours, it takes
# the reading worth most" - R11 (36) beats the wrapped R1 (26): 36 + Y9-Y13 (55) + B1-B4 (10) =
# 101 opens (as R1 it would be 91, a wrong opening).
sc(
    "258_wrap_option_okey_after_12_13_reads_11_for_an_exact_101",
    "iltan987_solver_wrap_okey_after_12_13_reads_11",
    "run_wraps_12_13_1, okey K1: R12 R13 okey reads R11 (36), not the wrapped R1 (26), so 36 + 55 + 10 opens at exactly 101",
    ind="K13",
    rules={"run_wraps_12_13_1": True},
    racks=["R12 R13 K1 Y9 Y10 Y11 Y12 Y13 B1 B2 B3 B4 K5", "", "", ""],
    steps=[open_(0, "R12 R13 K1 | Y9 Y10 Y11 Y12 Y13 | B1 B2 B3 B4"), discard(0, "K5")],
    end=in_progress(),
)


# iltan987/okey101 planOpened "lays off at most 2 tiles per end of a run per turn (table rule
# example)": R6 R7 R8 with R3 R4 R5 R9 R10 in a pair opener's hand. That engine counts per turn;
# RULES.md "After opening" counts per action: "At most 2 tiles onto the same end of a meld in one
# action" - R3 R4 R5 at once is refused, R4 R5 then R3 in a second add are accepted, and so is
# R9 R10; "Add tiles to any table meld (anyone's)" holds for a pair opener too (no
# `pair_opener_adds_per_turn` limit in classic). Seat 0 opens R6-R8 (21) + 55 + 55 = 131.
sc(
    "259_pair_opener_adds_two_tiles_per_run_end_per_action_three_at_once_refused",
    "iltan987_opened_layoff_two_per_end_per_action",
    "a pair opener adds R4 R5 below R6 R7 R8 (R3 R4 R5 at once is refused), then R3 in another add, then R9 R10 above",
    ind="K13",
    racks=["R6 R7 R8 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B2",
           "R1 R1 Y2 Y2 B3 B3 K4 K4 Y5 Y5 R3 R4 R5 R9 R10 Y3", "", ""],
    avoid="R11 R2",
    steps=[
        open_(0, "R6 R7 R8 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "B2"),
        draw(1),
        open_(1, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4 | Y5 Y5"),
        add(1, 0, "R3 R4 R5", ok=False),
        add(1, 0, "R4 R5"),
        add(1, 0, "R3"),
        add(1, 0, "R9 R10"),
        discard(1, "Y3"),
    ],
    end=in_progress(),
)


# iltan987/okey101 planOpened, taking an okey from the table: "does not swap when the taken okey
# could not be played" (a full R1-R13 run with the okey as R6). That planner chooses not to; the
# rules allow it. RULES.md "After opening": "Retrieve an okey ... in a run, the tile at its place";
# "If the okey was placed by another player, that player gets 101"; "A retrieved okey need not be
# used in the same turn". Indicator K13: okey K1. Seat 0 opens R4 R5 okey(R6) R7 R8 (30) + 55 + 55
# = 140 and grows the run to R2-R10 (two tiles per end per add); seat 1 opens Y3-Y7 + K9-K13 +
# B4-B8 = 110, completes R1-R13 (R11 R12, R13, R1) and retrieves the okey with R6: 101 to seat 0.
sc(
    "260_okey_retrieved_from_a_full_1_to_13_run",
    "iltan987_opened_okey_swap_in_a_full_1_13_run",
    "okey K1: the okey standing for R6 in a run grown to R1-R13 is retrieved with R6 (101 to its placer) and kept",
    ind="K13",
    racks=["R4 R5 K1 R7 R8 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R2 R3 R9 R10 B2",
           "R1 R11 R12 R13 R6 Y3 Y4 Y5 Y6 Y7 K9 K10 K11 K12 K13 B4 B5 B6 B7 B8 K5", "", ""],
    avoid="Y8 Y2 K8 B3",
    steps=[
        open_(0, "R4 R5 K1 R7 R8 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        add(0, 0, "R2 R3"),
        add(0, 0, "R9 R10"),
        discard(0, "B2"),
        draw(1),
        open_(1, "Y3 Y4 Y5 Y6 Y7 | K9 K10 K11 K12 K13 | B4 B5 B6 B7 B8"),
        add(1, 0, "R11 R12"),
        add(1, 0, "R13"),
        add(1, 0, "R1"),
        retrieve(1, 0, "R6", pen=[P(0, 101, OR)]),
        discard(1, "K5"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# tahatsahin/okey101 (TypeScript): validate tests
# ---------------------------------------------------------------------------------------------

# tahatsahin/okey101 validate tests testJokerMelds ("fake joker wrong color invalid in run"),
# testMultiTileLayoff ("multi-tile run layoff accepted") and testJokerLayoff ("joker can be used in
# run layoff", "fake joker wrong color invalid in run layoff"). Indicator R1: okey R2, F plays as
# R2. RULES.md "Tiles and deal": "A false joker is not wild" - B3 B4 F is no run (rejected, no
# penalty) and F does not fit B3-B5; "After opening": "At most 2 tiles onto the same end" (R6 R7);
# the okey added to R3-R7 takes "the reading worth most", R8 on top ("An okey's place in a run is
# fixed when it is laid"), so the low end still takes F as R2. Opening B3-B5 (12) + R3-R5 (12) +
# 55 + 55 = 134.
sc(
    "261_false_joker_fits_no_run_of_another_colour_the_okey_goes_on_top_then_f_below",
    "tahatsahin_validate_fake_joker_wrong_colour_and_joker_layoff",
    "okey R2, F plays as R2: B3 B4 F is no run; R6 R7 then the okey (as R8) go onto R3-R5; F does not fit B3-B5 but fits below R3",
    ind="R1",
    racks=["B3 B4 F B5 R3 R4 R5 K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R6 R7 R2 K2", "", "", ""],
    avoid="B2 B6 R9 Y8 K8",
    steps=[
        open_(0, "B3 B4 F", ok=False),
        open_(0, "B3 B4 B5 | R3 R4 R5 | K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        add(0, 1, "R6 R7"),
        add(0, 1, "R2"),
        add(0, 0, "F", ok=False),
        add(0, 1, "F"),
        discard(0, "K2"),
    ],
    end=in_progress(),
)
