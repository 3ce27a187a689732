"""Second half of the scenarios: after opening, retrieval, the side discard, in-play penalties,
the called mode, end-of-hand scores, the turn timeout and the presets. Imported by
make_scenarios.py. Indicator R9 (okeys R10, F plays as R10) unless a scenario says otherwise."""

from okeygen import (P, add, call, discard, draw, finished, in_progress, lay, open_, pile_empty, ret,
                     retrieve, scenario, take, timeout)

WO = "wrong_opening"
DO = "discard_okey"
DP = "discard_playable"
SDO = "side_discard_opening"
OR = "okey_retrieved"
TR = "table_rollback"

K9_13 = "K9 K10 K11 K12 K13"
Y9_13 = "Y9 Y10 Y11 Y12 Y13"
B9_13 = "B9 B10 B11 B12 B13"
B10_13 = "B10 B11 B12 B13"

# ---------------------------------------------------------------------------------------------
# After opening
# ---------------------------------------------------------------------------------------------

scenario(
    "049_meld_opener_lays_runs_of_any_value_but_no_pairs",
    "after a meld opening a 6-point run may be laid (no minimum), a pair may not",
    racks=[f"{K9_13} {Y9_13} R5 R5 R1 R2 R3 B7", "", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        lay(0, "R5 R5", ok=False),
        lay(0, "R1 R2 R3"),
        discard(0, "B7"),
    ],
    end=in_progress(),
)

scenario(
    "050_pair_opener_lays_only_pairs_and_may_add_to_runs",
    "a pair opener lays pairs only, and may add tiles to anyone's runs (no limit in classic)",
    racks=[f"{K9_13} {Y9_13} B1",
           "R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K1 K2 K3 B6 B6 K7 K8 Y8", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "B1"),
        draw(1),
        open_(1, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"),
        lay(1, "K1 K2 K3", ok=False),
        lay(1, "B6 B6"),
        add(1, 0, "K7 K8"),
        add(1, 1, "Y8"),
        discard(1, "K1"),
    ],
    end=in_progress(),
)

scenario(
    "051_nobody_lays_adds_or_retrieves_before_opening",
    "an unopened player may not add to a table meld, lay, or retrieve an okey",
    racks=[f"K11 K12 R10 {Y9_13} {B9_13} R1", "K10 R2 R3 R4 K13 R7", "", ""],
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | {B9_13}"), discard(0, "R1"),
        draw(1),
        add(1, 0, "K10", ok=False),
        lay(1, "R2 R3 R4", ok=False),
        retrieve(1, 0, "K13", ok=False),
        discard(1, "R7"),
    ],
    end=in_progress(),
)

scenario(
    "052_opened_player_adds_to_another_players_melds",
    "after opening, tiles may be added to any player's melds",
    racks=[f"{K9_13} {Y9_13} R1", f"{B9_13} R11 R12 R13 Y5 Y6 Y7 K8 Y8 R4", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"{B9_13} | R11 R12 R13 | Y5 Y6 Y7"),
        add(1, 0, "K8"),
        add(1, 1, "Y8"),
        discard(1, "R4"),
    ],
    end=in_progress(),
)

scenario(
    "053_at_most_two_tiles_onto_the_same_end_in_one_action",
    "three tiles on one end are rejected; two on each end in one action are accepted",
    racks=[f"K7 K8 K9 Y10 Y11 Y12 Y13 {B10_13} K3 K4 K5 K6 K10 K11 K12 K13 R2", "", "", ""],
    steps=[
        open_(0, f"K7 K8 K9 | Y10 Y11 Y12 Y13 | {B10_13}"),
        add(0, 0, "K10 K11 K12", ok=False),
        add(0, 0, "K4 K5 K6", ok=False),
        add(0, 0, "K5 K6 K10 K11"),
        add(0, 0, "K12 K13"),
        add(0, 0, "K3 K4"),
        discard(0, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "054_pairs_take_nothing",
    "no tile, not even an okey, can be added to a pair; the pair's own okey is retrieved with the twin",
    racks=["K5 K5 R10 K6 K6 Y2 Y2 B3 B3 R4 R4 K4 K7", "", "", ""],
    steps=[
        open_(0, "K5 R10 | K6 K6 | Y2 Y2 | B3 B3 | R4 R4"),
        add(0, 0, "K5", ok=False),
        add(0, 1, "K4", ok=False),
        retrieve(0, 0, "K5"),
        add(0, 1, "R10", ok=False),
        # only pairs on the table: nothing is playable
        discard(0, "K7"),
        take(1), ret(1), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "055_a_set_takes_only_its_missing_colours",
    "R5 Y5 B5 takes K5 only; once four colours are there it takes nothing",
    racks=[f"R5 Y5 B5 {K9_13} {Y9_13} R5 K6 K5 Y5", "", "", ""],
    steps=[
        open_(0, f"R5 Y5 B5 | {K9_13} | {Y9_13}"),
        add(0, 0, "R5", ok=False),
        add(0, 0, "K6", ok=False),
        add(0, 0, "K5"),
        add(0, 0, "Y5", ok=False),
        discard(0, "R5"),
    ],
    end=in_progress(),
)

scenario(
    "056_set_with_an_okey_takes_the_colour_the_okey_would_read",
    "B3 K3 okey takes a real R3 (the okey moves to yellow); at 4 tiles it takes nothing more",
    racks=[f"B3 K3 R10 {K9_13} {Y9_13} R3 Y3", "", "", ""],
    steps=[
        open_(0, f"B3 K3 R10 | {K9_13} | {Y9_13}"),
        add(0, 0, "R3"),
        add(0, 0, "Y3", ok=False),
        discard(0, "Y3"),
    ],
    end=in_progress(),
)

scenario(
    "057_missing_colours_of_a_set_with_an_okey_are_playable",
    "B3 K3 okey: discarding R3 or Y3 costs 101 (opened or not); B3 does not fit",
    racks=[f"B3 K3 R10 {K9_13} {Y9_13} R3", "Y3", "B3", ""],
    steps=[
        open_(0, f"B3 K3 R10 | {K9_13} | {Y9_13}"),
        discard(0, "R3", pen=[P(0, 101, DP)]),
        draw(1), discard(1, "Y3", pen=[P(1, 101, DP)]),
        draw(2), discard(2, "B3"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Retrieving okeys
# ---------------------------------------------------------------------------------------------

scenario(
    "058_retrieving_another_players_okey_from_a_run_costs_the_placer",
    "seat 1 gives K13 for seat 0's okey in K11 K12 okey: seat 0 pays 101, the okey need not be used",
    racks=[f"K11 K12 R10 {Y9_13} {B9_13} R1", f"R11 R12 R13 {Y9_13} {B10_13} K13 R2", "", ""],
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | {B9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"R11 R12 R13 | {Y9_13} | {B10_13}"),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        discard(1, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "059_retrieval_needs_the_real_tile_and_never_an_okey",
    "the wrong tile, the other okey, or a meld with no okey are rejected; one's own okey comes back free",
    racks=[f"K11 K12 R10 R10 {Y9_13} {B9_13} K10 Y8 K13 B2", "", "", ""],
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | {B9_13}"),
        retrieve(0, 0, "K10", ok=False),
        retrieve(0, 0, "R10", ok=False),
        retrieve(0, 1, "Y8", ok=False),
        retrieve(0, 0, "K13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "060_three_tile_set_needs_every_missing_colour_at_once",
    "B3 K3 okey: R3 alone is rejected, R3 Y3 together take the okey (101 to seat 0) and fill the set",
    racks=[f"B3 K3 R10 {K9_13} {Y9_13} R1", f"{B9_13} R11 R12 R13 K4 K5 K6 R3 Y3 K1", "R3", ""],
    steps=[
        open_(0, f"B3 K3 R10 | {K9_13} | {Y9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"{B9_13} | R11 R12 R13 | K4 K5 K6"),
        retrieve(1, 0, "R3", ok=False),
        retrieve(1, 0, "R3 Y3", pen=[P(0, 101, OR)]),
        discard(1, "K1"),
        # the set is now four real tiles: the other R3 fits nowhere
        draw(2), discard(2, "R3"),
    ],
    end=in_progress(),
)

scenario(
    "061_four_tile_set_gives_its_okey_for_the_one_tile_it_stands_for",
    "B3 K3 Y3 okey: Y3 is rejected, R3 takes the okey back (101 to seat 0)",
    racks=[f"B3 K3 Y3 R10 {K9_13} {Y9_13} R1", f"{B9_13} R11 R12 R13 K4 K5 K6 R3 Y3 K1", "", ""],
    steps=[
        open_(0, f"B3 K3 Y3 R10 | {K9_13} | {Y9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"{B9_13} | R11 R12 R13 | K4 K5 K6"),
        retrieve(1, 0, "Y3", ok=False),
        retrieve(1, 0, "R3", pen=[P(0, 101, OR)]),
        discard(1, "K1"),
    ],
    end=in_progress(),
)

scenario(
    "062_okey_in_a_pair_is_retrieved_with_the_twin",
    "K7 + okey: K8 is rejected, the twin K7 takes the okey (101 to the pair opener)",
    racks=["K7 R10 Y2 Y2 B3 B3 K4 K4 B5 B5 R1", f"{B9_13} R11 R12 R13 {Y9_13} K8 K7 R2", "", ""],
    steps=[
        open_(0, "K7 R10 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5"), discard(0, "R1"),
        draw(1),
        open_(1, f"{B9_13} | R11 R12 R13 | {Y9_13}"),
        retrieve(1, 0, "K8", ok=False),
        retrieve(1, 0, "K7", pen=[P(0, 101, OR)]),
        discard(1, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "063_okey_retrieved_charges_who_placed_it_not_the_melds_owner",
    "seat 1 adds an okey to seat 0's run (it reads K12); seat 2 retrieves it: seat 1 pays 101",
    racks=[f"K9 K10 K11 {Y9_13} {B9_13} R1",
           f"R11 R12 R13 {Y9_13} {B10_13} R10 R2",
           "R4 R5 R6 R7 R8 Y4 Y5 Y6 Y7 Y8 K4 K5 K6 K7 K8 B6 B7 B8 K12 B1", ""],
    steps=[
        open_(0, f"K9 K10 K11 | {Y9_13} | {B9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"R11 R12 R13 | {Y9_13} | {B10_13}"),
        add(1, 0, "R10"),
        discard(1, "R2"),
        draw(2),
        open_(2, "R4 R5 R6 R7 R8 | Y4 Y5 Y6 Y7 Y8 | K4 K5 K6 K7 K8 | B6 B7 B8"),
        retrieve(2, 0, "K12", pen=[P(1, 101, OR)]),
        discard(2, "B1"),
    ],
    end=in_progress(),
)

scenario(
    "064_false_joker_retrieves_an_okey_standing_for_the_okey_face",
    "R8 R9 okey reads 8-9-10: the false joker (a plain R10) takes the okey back",
    racks=[f"R8 R9 R10 {K9_13} {Y9_13} B1", f"{B9_13} {K9_13} F B2", "", ""],
    steps=[
        open_(0, f"R8 R9 R10 | {K9_13} | {Y9_13}"), discard(0, "B1"),
        draw(1),
        open_(1, f"{B9_13} | {K9_13}"),
        retrieve(1, 0, "F", pen=[P(0, 101, OR)]),
        discard(1, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "065_okey_added_to_a_run_takes_the_higher_end_and_stays",
    "an okey added to K5-7 reads K8; then K8 no longer fits but K9 does, and K8 retrieves the okey",
    racks=[f"K5 K6 K7 {Y9_13} {B9_13} R10 K8 K9 R2", "", "", ""],
    steps=[
        open_(0, f"K5 K6 K7 | {Y9_13} | {B9_13}"),
        add(0, 0, "R10"),
        add(0, 0, "K8", ok=False),
        add(0, 0, "K9"),
        retrieve(0, 0, "K8"),
        discard(0, "R2"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# The side discard
# ---------------------------------------------------------------------------------------------

scenario(
    "066_discarded_okey_cannot_be_taken_with_penalties_off",
    "in_play_penalties off: discarding the okey costs nothing, and it still cannot be taken",
    rules={"in_play_penalties": False},
    racks=["R10", "Y3", "", ""],
    steps=[discard(0, "R10"), take(1, ok=False), draw(1), discard(1, "Y3")],
    end=in_progress(),
)

scenario(
    "067_playable_side_discard_cannot_be_taken",
    "K8 fits K9-13: its discard costs 101 and the next player cannot take it",
    racks=[f"{K9_13} {Y9_13} K8", "Y3", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8", pen=[P(0, 101, DP)]),
        take(1, ok=False), draw(1), discard(1, "Y3"),
    ],
    end=in_progress(),
)

scenario(
    "068_pair_opener_may_not_take_the_side_discard_when_option_off",
    "pairs_take_discard off: a pair opener must draw from the centre pile",
    rules={"pairs_take_discard": False},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R11 K13 K12", "Y13", "B13", "R11"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "K13"),
        draw(1), discard(1, "Y13"), draw(2), discard(2, "B13"), draw(3), discard(3, "R11"),
        take(0, ok=False), draw(0), discard(0, "K12"),
    ],
    end=in_progress(),
)

scenario(
    "069_pair_opener_takes_the_side_discard_into_a_new_pair",
    "default pairs_take_discard: a pair opener takes R11 and must lay it in a pair before discarding",
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R11 K13 K12", "Y13", "B13", "R11"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "K13"),
        draw(1), discard(1, "Y13"), draw(2), discard(2, "B13"), draw(3), discard(3, "R11"),
        take(0), discard(0, "K12", ok=False), lay(0, "R11 R11"), discard(0, "K12"),
    ],
    end=in_progress(),
)

scenario(
    "070_side_discard_returned_before_any_table_change_is_free",
    "an unopened player holding the side discard cannot discard; returning it is free, then a draw is required",
    racks=["K8", "Y3", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"),
        take(1),
        discard(1, "Y3", ok=False),
        ret(1),
        discard(1, "Y3", ok=False),
        take(1, ok=False),
        draw(1),
        ret(1, ok=False),
        discard(1, "Y3"),
        draw(2),
    ],
    end=in_progress(),
)

# Shared layout for the opened-player side-discard scenarios: seats 0 and 1 open, a round passes,
# seat 0 discards B6 (it fits no meld) and seat 1 is on turn.
L1_RACKS = [
    f"{K9_13} {Y9_13} R1 B6",
    f"{B9_13} R11 R12 R13 Y5 Y6 Y7 R4 K8 K1 K2 K3 K4 K5 B7 B8",
    "B4",
    "R3",
]
L1_STEPS = [
    open_(0, f"{K9_13} | {Y9_13}"), discard(0, "R1"),
    draw(1), open_(1, f"{B9_13} | R11 R12 R13 | Y5 Y6 Y7"), discard(1, "R4"),
    draw(2), discard(2, "B4"), draw(3), discard(3, "R3"),
    draw(0), discard(0, "B6"),
]

scenario(
    "071_opened_player_must_use_the_side_discard_in_a_table_action",
    "an opened player who takes B6 cannot discard until B6 is on the table",
    racks=L1_RACKS,
    steps=L1_STEPS + [take(1), discard(1, "K1", ok=False), lay(1, "B6 B7 B8"), discard(1, "K1")],
    end=in_progress(),
)

scenario(
    "072_return_after_a_table_change_rolls_back_and_costs_101",
    "seat 1 takes B6, adds K8, returns B6: the add is undone (K8 back, still playable) and 101 is charged",
    racks=L1_RACKS,
    steps=L1_STEPS + [
        take(1), add(1, 0, "K8"),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1),
        discard(1, "K8", pen=[P(1, 101, DP)]),
        take(2, ok=False), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "073_rollback_undoes_an_opening_and_its_side_discard_charge",
    "returning the side discard after opening with it undoes the opening: 101 to the returner",
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y11 Y12 Y13", "", ""],
    avoid="K8 K9",
    steps=[
        discard(0, "K8"),
        take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13 | Y11 Y12 Y13", pen=[P(0, 80, SDO)]),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1),
        # not opened any more, and K9 is back in the rack with an empty table
        lay(1, "B9 B10 B11", ok=False),
        discard(1, "K9"),
        draw(2),
    ],
    end=in_progress(),
)

scenario(
    "074_meld_numbers_are_reused_after_a_rollback",
    "a meld laid and rolled back frees its number: the next meld laid is meld 5 again",
    racks=L1_RACKS,
    steps=L1_STEPS + [
        take(1), lay(1, "K1 K2 K3"),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1),
        lay(1, "K1 K2 K3"),
        add(1, 5, "K4"),
        add(1, 6, "K5", ok=False),
        discard(1, "B7"),
    ],
    end=in_progress(),
)

scenario(
    "075_rollback_puts_a_retrieved_okey_back_on_the_table",
    "a retrieval undone by a rollback can be made again: the okey and K13 went back",
    racks=[f"K11 K12 R10 {Y9_13} B1 B2 B3 B4 R1 B6",
           f"{B9_13} R11 R12 R13 Y5 Y6 Y7 R4 K13 K1", "Y1", "R3"],
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | B1 B2 B3 B4"), discard(0, "R1"),
        draw(1), open_(1, f"{B9_13} | R11 R12 R13 | Y5 Y6 Y7"), discard(1, "R4"),
        draw(2), discard(2, "Y1"), draw(3), discard(3, "R3"),
        draw(0), discard(0, "B6"),
        take(1),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        discard(1, "K1"),
    ],
    end=in_progress(),
)

scenario(
    "076_rollback_restores_raised_thresholds",
    "raising: an opening of 118 undone by a rollback no longer raises the bar, so 110 opens",
    rules={"threshold": "raising"},
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y11 Y12 Y13 Y1", f"{K9_13} {Y9_13} Y2", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"),
        take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13 | Y11 Y12 Y13", pen=[P(0, 80, SDO)]),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1), discard(1, "Y1"),
        draw(2), open_(2, f"{K9_13} | {Y9_13}"), discard(2, "Y2"),
    ],
    end=in_progress(),
)

scenario(
    "077_opened_player_uses_the_side_discard_to_retrieve",
    "K13 taken as side discard and given for an okey counts as used: the discard is then allowed",
    racks=[f"K11 K12 R10 {Y9_13} B1 B2 B3 B4 R1 K13",
           f"{B9_13} R11 R12 R13 Y5 Y6 Y7 R4 K1", "Y1", "R3"],
    avoid="K13",
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | B1 B2 B3 B4"), discard(0, "R1"),
        draw(1), open_(1, f"{B9_13} | R11 R12 R13 | Y5 Y6 Y7"), discard(1, "R4"),
        draw(2), discard(2, "Y1"), draw(3), discard(3, "R3"),
        # K13 does not fit K11 K12 okey(13): no penalty, and it may be taken
        draw(0), discard(0, "K13"),
        take(1),
        discard(1, "K1", ok=False),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        discard(1, "K1"),
    ],
    end=in_progress(),
)

scenario(
    "078_side_discard_in_a_pair_opening_costs_20_times",
    "K7 taken into a pair opening costs its discarder 20 x 7 = 140",
    racks=["K7", "K7 Y2 Y2 B3 B3 K4 K4 B5 B5 R1", "", ""],
    steps=[
        discard(0, "K7"), take(1),
        open_(1, "K7 K7 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5", pen=[P(0, 140, SDO)]),
        discard(1, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "079_false_joker_side_discard_charges_the_okey_number",
    "a false joker taken into a meld opening costs 10 x the okey's number (10) = 100",
    racks=["F", f"R8 R9 R11 {K9_13} {Y9_13} B2", "", ""],
    steps=[
        discard(0, "F"), take(1),
        open_(1, f"R8 R9 F R11 | {K9_13} | {Y9_13}", pen=[P(0, 100, SDO)]),
        discard(1, "B2"),
    ],
    end=in_progress(),
)

scenario(
    "080_false_joker_side_discard_in_pairs_costs_20_times_the_okey_number",
    "indicator B12 (okey B13): F taken into a pair opening with F F costs 20 x 13 = 260",
    ind="B12",
    racks=["F", "F Y2 Y2 B3 B3 K4 K4 R5 R5 R1", "", ""],
    steps=[
        discard(0, "F"), take(1),
        open_(1, "F F | Y2 Y2 | B3 B3 | K4 K4 | R5 R5", pen=[P(0, 260, SDO)]),
        discard(1, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "081_wrong_opening_with_the_side_discard_sends_it_back",
    "a wrong opening with the side discard: 101, the tile goes back, the player must draw, then only discard",
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y1", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"), take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13", pen=[P(1, 101, WO)]),
        discard(1, "Y1", ok=False),
        take(1, ok=False),
        ret(1, ok=False),
        draw(1),
        discard(1, "K8", ok=False),
        open_(1, "B9 B10 B11 B12 B13", ok=False),
        discard(1, "Y1"),
        draw(2),
    ],
    end=in_progress(),
)

scenario(
    "082_below_threshold_with_the_side_discard_and_penalties_off",
    "in_play_penalties off: the low opening is rejected, the side discard stays held; a full opening is free",
    rules={"in_play_penalties": False},
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y11 Y12 Y13 Y1", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"), take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13", ok=False),
        discard(1, "Y1", ok=False),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13 | Y11 Y12 Y13"),
        discard(1, "Y1"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# In-play penalties
# ---------------------------------------------------------------------------------------------

scenario(
    "083_okey_discard_is_charged_only_as_discard_okey",
    "an okey that a run could take is charged 101 once, as discard_okey",
    racks=[f"{K9_13} {Y9_13} R10", "", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "R10", pen=[P(0, 101, DO)]),
        take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "084_playable_discard_costs_opened_and_unopened_players",
    "K8 and Y8 fit table runs: 101 each, whether the discarder opened or not; B8 fits nothing",
    racks=[f"{K9_13} {Y9_13} K8", "Y8", "B8", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8", pen=[P(0, 101, DP)]),
        draw(1), discard(1, "Y8", pen=[P(1, 101, DP)]),
        draw(2), discard(2, "B8"),
    ],
    end=in_progress(),
)

scenario(
    "085_false_joker_fits_as_the_okey_face",
    "R7 R8 R9 on the table takes a false joker (a plain R10): discarding F costs 101",
    racks=[f"R7 R8 R9 {K9_13} {Y9_13} F", "", "", ""],
    steps=[
        open_(0, f"R7 R8 R9 | {K9_13} | {Y9_13}"),
        discard(0, "F", pen=[P(0, 101, DP)]),
        take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "086_called_mode_a_call_charges_the_discarder",
    "playable_discard called: K8 costs nothing when discarded, 101 when seat 1 calls it",
    rules={"playable_discard": "called"},
    racks=[f"{K9_13} {Y9_13} K8", "Y3", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8"),
        call(2, ok=False),
        call(1, pen=[P(0, 101, DP)]),
        call(1, ok=False),
        take(1, ok=False),
        draw(1), discard(1, "Y3"),
    ],
    end=in_progress(),
)

scenario(
    "087_called_mode_a_call_on_a_tile_that_does_not_fit_charges_nobody",
    "playable_discard called: calling B2, which fits nothing, is accepted and charges nobody",
    rules={"playable_discard": "called"},
    racks=[f"{K9_13} {Y9_13} B2", "Y3", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "B2"),
        call(1),
        draw(1), discard(1, "Y3"),
    ],
    end=in_progress(),
)

scenario(
    "088_called_mode_a_call_after_taking_is_rejected",
    "playable_discard called: once seat 1 drew, calling K8 is rejected and nobody pays",
    rules={"playable_discard": "called"},
    racks=[f"{K9_13} {Y9_13} K8", "Y3", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8"),
        draw(1), call(1, ok=False), discard(1, "Y3"),
        call(2), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "089_called_mode_okey_discard_is_charged_at_once",
    "playable_discard called: a discarded okey costs 101 at once; a call on it charges nothing more",
    rules={"playable_discard": "called"},
    racks=[f"{K9_13} {Y9_13} R10", "", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "R10", pen=[P(0, 101, DO)]),
        call(1), take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "090_called_mode_with_penalties_off_charges_nobody",
    "playable_discard called, in_play_penalties off: the call is accepted and nobody pays",
    rules={"playable_discard": "called", "in_play_penalties": False},
    racks=[f"{K9_13} {Y9_13} K8", "", "", ""],
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8"),
        call(1), take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)

scenario(
    "091_penalties_off_nothing_is_charged_but_the_rules_hold",
    "in_play_penalties off: playable and okey discards, retrieval and side discard openings cost nothing",
    rules={"in_play_penalties": False},
    racks=[f"K11 K12 R10 {Y9_13} {B9_13} K10",
           f"R11 R12 R13 {Y9_13} {B10_13} K13",
           "K1",
           "K2 K3 K4 K5 R4 R5 R6 R7 R8 Y4 Y5 Y6 Y7 Y8 B4 B5 B6 B7 B8 R2"],
    steps=[
        open_(0, f"K11 K12 R10 | {Y9_13} | {B9_13}"),
        discard(0, "K10"),
        take(1, ok=False), draw(1),
        open_(1, f"R11 R12 R13 | {Y9_13} | {B10_13}"),
        retrieve(1, 0, "K13"),
        discard(1, "R10"),
        take(2, ok=False), draw(2), discard(2, "K1"),
        take(3),
        open_(3, "K1 K2 K3 K4 K5 | R4 R5 R6 R7 R8 | Y4 Y5 Y6 Y7 Y8 | B4 B5 B6 B7 B8"),
        discard(3, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "092_penalties_off_rollback_still_undoes_the_turn",
    "in_play_penalties off: returning after a table change costs nothing but still undoes the add",
    rules={"in_play_penalties": False},
    racks=L1_RACKS,
    steps=L1_STEPS + [
        take(1), add(1, 0, "K8"),
        ret(1),
        draw(1),
        add(1, 0, "K8"),
        discard(1, "K1"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# End of the hand
# ---------------------------------------------------------------------------------------------

# Seat 0 (melds) keeps R10 R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3: 18 + 101 for the okey = 119.
# Seat 1 (pairs) keeps R7 Y7 B7 K7 R8 Y8 B8 K8 Y6 B6 Y4: 76, doubled = 152.
# Seat 2 never opened and holds the other okey: 202, no surcharge. Seat 3: 202.
scenario(
    "093_pile_empty_scores_every_kind_of_seat",
    "pile empty, no winner: rack sums for a meld opener (+101 per okey), doubled for a pair opener, 202 unopened",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R10 R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3 B4",
           "R5 R5 Y5 Y5 B5 B5 K5 K5 R6 R6 R7 Y7 B7 K7 R8 Y8 B8 K8 Y6 B6 K6",
           "R10 B12", "B11"],
    pile="Y4",
    pile_len=3,
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "B4"),
        draw(1), open_(1, "R5 R5 | Y5 Y5 | B5 B5 | K5 K5 | R6 R6"), discard(1, "K6"),
        draw(2), discard(2, "B12"),
        draw(3), discard(3, "B11"),
        draw(0, ok=False), discard(0, "R1", ok=False),
    ],
    end=pile_empty([119, 152, 202, 202]),
)

# Seat 0 opened on turn 0 and finishes on turn 4: m = 1.
# Seat 1 keeps Y1 Y2 Y3 B1 B3 K1 K2 K3 R6 R7 Y5 = 34.
# Seat 2 (pairs) keeps R10 Y4 B4 K5 B5 Y7 K7 K8 Y8 R8 R2: 58 doubled + 101 = 217.
SEAT0_FINISHER = f"{K9_13} {Y9_13} {B10_13} R11 R12 R13 R1 R2 R3 R4 B2"
scenario(
    "094_finish_after_an_earlier_opening_multiplier_1",
    "seat 0 finishes on its second turn: -101, rack sums x1, pair opener 2x sum + 101 for a held okey, 202",
    racks=[SEAT0_FINISHER,
           f"{K9_13} {Y9_13} Y1 Y2 Y3 B1 B3 K1 K2 K3 R6 R7 B6",
           "B7 B7 B8 B8 Y6 Y6 K6 K6 K4 K4 R10 Y4 B4 K5 B5 Y7 K7 K8 Y8 R8 B12",
           "R12"],
    pile="Y5 R2 R9 R5",
    avoid="R5",
    steps=[
        open_(0, f"{K9_13} | {Y9_13} | {B10_13} | R11 R12 R13"), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {Y9_13}"), discard(1, "B6"),
        draw(2), open_(2, "B7 B7 | B8 B8 | Y6 Y6 | K6 K6 | K4 K4"), discard(2, "B12"),
        draw(3), discard(3, "R12"),
        draw(0), lay(0, "R1 R2 R3 R4"),
        discard(0, "R5"),
        draw(1, ok=False),
    ],
    end=finished(0, [-101, 34, 217, 202]),
)

# m = 2 (final discard an okey). Seat 1 keeps R10 Y1 Y2 Y3 B1 K1 K2 K3 R6 R7 Y5: 31 x 2 + 101 = 163.
scenario(
    "095_finishing_with_the_okey_doubles_but_not_a_held_okey",
    "final discard an okey: no discard_okey, m = 2; a held okey stays +101; unopened 404 without surcharge",
    racks=[f"{K9_13} {Y9_13} {B10_13} R11 R12 R13 R1 R2 R3 R10 B2",
           f"{K9_13} {Y9_13} R10 Y1 Y2 Y3 B1 K1 K2 K3 R6 R7 B6",
           "R12", "B12"],
    pile="Y5 R9 B5 R4",
    avoid="R4",
    steps=[
        open_(0, f"{K9_13} | {Y9_13} | {B10_13} | R11 R12 R13"), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {Y9_13}"), discard(1, "B6"),
        draw(2), discard(2, "R12"),
        draw(3), discard(3, "B12"),
        draw(0), lay(0, "R1 R2 R3 R4"),
        discard(0, "R10"),
    ],
    end=finished(0, [-202, 163, 404, 404]),
)

scenario(
    "096_direct_finish_by_a_later_seat_with_the_side_discard",
    "seat 1 takes K8, lays 21 tiles and discards the last: direct finish m = 2, and seat 0 pays 80",
    racks=["K8", "K9 K10 K11 K12 B9 B10 B11 B12 B13 Y9 Y10 Y11 Y12 Y13 R1 R2 R3 K1 K2 K3 Y1", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"), take(1),
        open_(1, "K8 K9 K10 K11 K12 | B9 B10 B11 B12 B13 | Y9 Y10 Y11 Y12 Y13 | R1 R2 R3 | K1 K2 K3",
              pen=[P(0, 80, SDO)]),
        discard(1, "Y1"),
    ],
    end=finished(1, [404, -202, 404, 404]),
)

PAIRS10 = "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5 | Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"
PAIRS10_TILES = PAIRS10.replace("|", " ")
SEAT1_MELDER = f"{K9_13} {B9_13} K1 K2 K3 B3 B4 B5 Y6 Y7 R6 R7 Y13"

# Pair opener finishes on turn 4: m = 2. Seat 1 keeps K1 K2 K3 K5 B3 B4 B5 Y6 Y7 R6 R7 = 49, x2 = 98.
# Seat 3 (pairs) keeps R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 B5: 37, 2 x 37 x 2 + 101 = 249.
scenario(
    "097_pair_opener_finish_doubles",
    "a pair opener finishes on a later turn (adding to a run): m = 2 for everyone, the held okey +101",
    racks=[f"{PAIRS10_TILES} B1 B2",
           SEAT1_MELDER,
           "Y12",
           "K6 K6 K7 K7 B6 B6 B7 B7 Y8 Y8 R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 Y11"],
    pile="K5 R12 B5 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {B9_13}"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "K6 K6 | K7 K7 | B6 B6 | B7 B7 | Y8 Y8"), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "B1"),
    ],
    end=finished(0, [-202, 98, 404, 249]),
)

scenario(
    "098_direct_finish_with_the_okey_multiplies_by_4",
    "the first player lays 21 tiles and discards the okey: m = 4, no discard_okey",
    racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13 R10", "", "", ""],
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
        discard(0, "R10"),
    ],
    end=finished(0, [-404, 808, 808, 808]),
)

scenario(
    "099_pair_opener_finishing_with_the_okey_multiplies_by_4",
    "pair opener (turn 0) finishes on turn 4 discarding the okey: m = 4; seat 1's 49 becomes 196",
    racks=[f"{PAIRS10_TILES} R10 B2", SEAT1_MELDER, "Y12", "Y11"],
    pile="K5 R12 B12 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {B9_13}"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "R10"),
    ],
    end=finished(0, [-404, 196, 808, 808]),
)

# Seat 0 keeps K1 K2 K3 B1 B2 B3 Y6 Y7 R6 R7 K4 = 42.
SEAT0_MELDER = f"{K9_13} {B9_13} K1 K2 K3 B1 B2 B3 Y6 Y7 R6 R7 K4 Y13"

scenario(
    "100_direct_pair_finish_with_the_okey_multiplies_by_8",
    "seat 1 opens 10 pairs, adds K8, discards the okey: m = 8 (direct, okey, pairs)",
    racks=[SEAT0_MELDER, f"{PAIRS10_TILES} R10", "", ""],
    pile="K8",
    steps=[
        open_(0, f"{K9_13} | {B9_13}"), discard(0, "Y13"),
        draw(1), open_(1, PAIRS10), add(1, 0, "K8"), discard(1, "R10"),
    ],
    end=finished(1, [336, -808, 1616, 1616]),
)

scenario(
    "101_direct_pair_finish_with_partners_multiplies_by_4_partner_scores_0",
    "partners: seat 1 opens 10 pairs and goes out directly (m = 4); its partner seat 3 scores 0",
    rules={"partners": True},
    racks=[SEAT0_MELDER, f"{PAIRS10_TILES} Y8", "", ""],
    pile="K8",
    steps=[
        open_(0, f"{K9_13} | {B9_13}"), discard(0, "Y13"),
        draw(1), open_(1, PAIRS10), add(1, 0, "K8"), discard(1, "Y8"),
    ],
    end=finished(1, [168, -404, 808, 0]),
)

scenario(
    "102_partner_of_the_finisher_scores_0_its_penalties_stay",
    "partners: seat 2 paid 101 for an okey discard; when seat 0 goes out seat 2 scores 0",
    rules={"partners": True},
    racks=[SEAT0_FINISHER, "B6", "R10",
           f"{K9_13} {Y9_13} Y1 Y2 Y3 B1 B3 K1 K2 K3 R6 R7 B7"],
    pile="Y4 K4 Y5 R5",
    avoid="R5",
    steps=[
        open_(0, f"{K9_13} | {Y9_13} | {B10_13} | R11 R12 R13"), discard(0, "B2"),
        draw(1), discard(1, "B6"),
        draw(2), discard(2, "R10", pen=[P(2, 101, DO)]),
        take(3, ok=False), draw(3), open_(3, f"{K9_13} | {Y9_13}"), discard(3, "B7"),
        draw(0), lay(0, "R1 R2 R3 R4"), discard(0, "R5"),
    ],
    end=finished(0, [-101, 202, 0, 34]),
)

# ---------------------------------------------------------------------------------------------
# Turn timeout
# ---------------------------------------------------------------------------------------------

scenario(
    "103_timeout_draws_and_discards_the_highest_tile_first_colour_on_ties",
    "timeout: seat 1 draws, then discards Y13 (13s in Y, B, K: yellow comes first); seat 2 opens with it",
    racks=["B2",
           "Y13 B13 K13 R12 R10 R2 R3 R4 R5 R6 R7 R8 Y2 Y3 Y4 Y5 Y6 Y7 K2 K3 K4",
           "Y11 Y12 K9 K10 K11 K12 B9 B10 B11 B12 R1", ""],
    pile="B1",
    avoid="Y13",
    steps=[
        discard(0, "B2"),
        timeout(1),
        take(2),
        open_(2, "Y11 Y12 Y13 | K9 K10 K11 K12 | B9 B10 B11 B12", pen=[P(1, 130, SDO)]),
        discard(2, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "104_timeout_counts_a_false_joker_as_the_okey_number",
    "indicator R12 (okey R13): F counts 13 in red, before Y13 and K13; the okey itself is never chosen",
    ind="R12",
    racks=["B2",
           "F R13 Y13 K13 Y12 B2 B3 B4 B5 B6 B7 B8 Y2 Y3 Y4 Y5 Y6 Y7 K2 K3 K4",
           "R11 R12 K9 K10 K11 K12 B9 B10 B11 B12 Y1", ""],
    pile="B1",
    steps=[
        discard(0, "B2"),
        timeout(1),
        take(2),
        open_(2, "R11 R12 F | K9 K10 K11 K12 | B9 B10 B11 B12", pen=[P(1, 130, SDO)]),
        discard(2, "Y1"),
    ],
    end=in_progress(),
)

scenario(
    "105_timeout_discard_that_fits_a_meld_is_charged",
    "normal penalties apply to the timeout play: Y13 fits Y10-12 and costs 101",
    racks=[f"Y10 Y11 Y12 {K9_13} {B10_13} R1",
           "Y13 R9 R8 R7 R6 R5 R4 R3 R2 Y8 Y7 Y6 Y5 Y4 Y3 K8 K7 K6 K5 K4 K3", "", ""],
    pile="B1",
    steps=[
        open_(0, f"Y10 Y11 Y12 | {K9_13} | {B10_13}"), discard(0, "R1"),
        timeout(1, pen=[P(1, 101, DP)]),
        take(2, ok=False), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "106_timeout_returns_an_unused_side_discard_then_draws",
    "timeout with the side discard unused and no table change: it goes back free, a draw, B13 is discarded",
    racks=["K8",
           "B13 R12 Y12 R2 R3 R4 R5 R6 R7 R8 Y2 Y3 Y4 Y5 Y6 Y7 K2 K3 K4 K5 K6",
           "B11 B12 K9 K10 K11 K12 Y9 Y10 Y11 Y12 R1", ""],
    pile="B1",
    avoid="B13 K8",
    steps=[
        discard(0, "K8"),
        take(1),
        timeout(1),
        take(2),
        open_(2, "B11 B12 B13 | K9 K10 K11 K12 | Y9 Y10 Y11 Y12", pen=[P(1, 130, SDO)]),
        discard(2, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "107_timeout_after_a_table_change_rolls_back_and_costs_101",
    "timeout holding an unused side discard after adding K8: rollback (101), draw, K8 discarded (101)",
    racks=[f"{K9_13} {Y9_13} R1 B6",
           f"{B9_13} R11 R12 R13 Y5 Y6 Y7 R4 K8 B1 B2 B3 Y1 Y2 Y3 K1 K2",
           "B4", "R3"],
    pile="K3 R2 Y8 K6 Y4",
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "R1"),
        draw(1), open_(1, f"{B9_13} | R11 R12 R13 | Y5 Y6 Y7"), discard(1, "R4"),
        draw(2), discard(2, "B4"), draw(3), discard(3, "R3"),
        draw(0), discard(0, "B6"),
        take(1), add(1, 0, "K8"),
        timeout(1, pen=[P(1, 101, TR), P(1, 101, DP)]),
        take(2, ok=False), draw(2),
    ],
    end=in_progress(),
)

scenario(
    "108_timeout_on_the_first_players_first_turn_discards_without_drawing",
    "timeout on turn 0: no draw; the 12s are B12 and K12 (the okey R10 is skipped): B12 goes",
    racks=["B12 K12 R10 R2 R3 R4 R5 R6 R7 R8 Y2 Y3 Y4 Y5 Y6 Y7 Y8 K2 K3 K4 K5 K6",
           f"B10 B11 {K9_13} Y10 Y11 Y12 Y13 R1", "", ""],
    avoid="B12",
    steps=[
        timeout(0),
        take(1),
        open_(1, f"B10 B11 B12 | {K9_13} | Y10 Y11 Y12 Y13", pen=[P(0, 120, SDO)]),
        discard(1, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "109_timeout_after_a_wrong_opening_with_the_side_discard",
    "after a wrong opening sent the side discard back, the timeout draws and discards B13",
    racks=["K8",
           "K9 K10 B9 B10 B11 B12 B13 R2 R3 R4 R5 R6 R7 R8 Y2 Y3 Y4 Y5 Y6 Y7 Y8",
           "B11 B12 K11 K12 K13 Y10 Y11 Y12 Y13 R1", ""],
    pile="K1",
    avoid="B13 K8",
    steps=[
        discard(0, "K8"), take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13", pen=[P(1, 101, WO)]),
        timeout(1),
        take(2),
        open_(2, "B11 B12 B13 | K11 K12 K13 | Y10 Y11 Y12 Y13", pen=[P(1, 130, SDO)]),
        discard(2, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "110_timeout_after_drawing_only_discards_never_the_okey",
    "indicator K12 (okey K13): seat 1 drew the okey; the timeout discards Y12, not the okey",
    ind="K12",
    racks=["B2",
           "Y12 B12 R2 R3 R4 R5 R6 R7 R8 Y2 Y3 Y4 Y5 Y6 Y7 Y8 K2 K3 K4 K5 K6",
           "Y10 Y11 R9 R10 R11 R12 R13 B9 B10 B11 R1", ""],
    pile="K13",
    avoid="Y12",
    steps=[
        discard(0, "B2"),
        draw(1), timeout(1),
        take(2),
        open_(2, "Y10 Y11 Y12 | R9 R10 R11 R12 R13 | B9 B10 B11", pen=[P(1, 120, SDO)]),
        discard(2, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "111_timeout_discarding_the_last_tile_finishes",
    "the first player lays 21 tiles and times out: the last tile is discarded, a direct finish",
    racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13 Y1", "", "", ""],
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
        timeout(0),
        timeout(1, ok=False),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)

# ---------------------------------------------------------------------------------------------
# Presets
# ---------------------------------------------------------------------------------------------

scenario(
    "112_yudum_runs_wrap_and_playable_discards_are_called",
    "yudum (seed 001): B12 B13 B1 is a run; a playable discard is charged only when called",
    rules={"preset": "yudum"},
    racks=[f"B12 B13 B1 {K9_13} {Y9_13} K8", "R2", "", ""],
    steps=[
        open_(0, f"B12 B13 B1 | {K9_13} | {Y9_13}"),
        discard(0, "K8"),
        call(1, pen=[P(0, 101, DP)]),
        draw(1), discard(1, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "113_yudum_pair_opener_adds_at_most_two_tiles_a_turn",
    "yudum: a pair opener adds K10 K11 to a run, then a third tile that turn is rejected",
    rules={"preset": "yudum"},
    racks=[f"K7 K8 K9 {Y9_13} {B9_13} R1", "R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 K10 K11 K6 Y1", "", ""],
    steps=[
        open_(0, f"K7 K8 K9 | {Y9_13} | {B9_13}"), discard(0, "R1"),
        draw(1), open_(1, "R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"),
        add(1, 0, "K10 K11"),
        add(1, 0, "K6", ok=False),
        discard(1, "Y1"),
    ],
    end=in_progress(),
)

# Seed 001 offers "Variant: standard or raising"; `yudum` is standard unless the table picks raising.
# At a raising table RULES.md raises both bars ("an accepted pair opening of n pairs makes the pair
# threshold at least n+1. The two rise independently"): seat 0's 6 pairs make the pair bar 7, so
# seat 1's 5 pairs are a wrong opening (101) and its 7 pairs, next turn, open; no pair opening
# touches the meld bar, so seat 2's K9-K13 (55) + B8-B12 (50) = 105 opens and makes it 106, and
# seat 3's 105 is wrong (101).
scenario(
    "114_yudum_raising_pairs_lift_the_pair_bar_and_melds_the_meld_bar",
    "yudum at a raising table: after 6 pairs the pair bar is 7 (5 pairs are a wrong opening, 7 open); pair openings leave the meld bar at 101, so 105 opens, and after it 105 is wrong",
    rules={"preset": "yudum", "threshold": "raising"},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 Y13 B1",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 Y7 Y7 Y12 Y9",
           f"{K9_13} B8 B9 B10 B11 B12 Y11",
           f"{K9_13} B8 B9 B10 B11 B12 Y10"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"), discard(0, "Y13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5", pen=[P(1, 101, WO)]), discard(1, "Y12"),
        draw(2), open_(2, f"{K9_13} | B8 B9 B10 B11 B12"), discard(2, "Y11"),
        draw(3), open_(3, f"{K9_13} | B8 B9 B10 B11 B12", pen=[P(3, 101, WO)]), discard(3, "Y10"),
        draw(0), discard(0, "B1"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5 | Y6 Y6 | Y7 Y7"), discard(1, "Y9"),
    ],
    end=in_progress(),
)

EX05_RACK = "K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13"
EX05_OPEN = "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"

# Seeds 002 and 003 name only the okey finish's doubling; on a direct finish and a pair opener's
# finish they are silent, so RULES.md's m = 2^(d+o+p) applies whole. A renamed scenario keeps its
# former file name as the filler seed (`seed=`), so its racks are the ones checked before.
scenario(
    "115_practice_direct_finish_doubles",
    "practice (seed 002 is silent on a direct finish, so RULES.md's d applies): m = 2: -101 x 2 = -202; never opened 202 x 2 = 404",
    rules={"preset": "practice"},
    racks=[f"{EX05_RACK} Y1", "", "", ""],
    steps=[open_(0, EX05_OPEN), discard(0, "Y1")],
    end=finished(0, [-202, 404, 404, 404]),
    seed="115_practice_direct_finish_is_not_multiplied",
)

scenario(
    "116_practice_direct_okey_finish_multiplies_by_4",
    "practice: a direct finish with the okey: d and o, m = 4: -101 x 4 = -404; never opened 202 x 4 = 808",
    rules={"preset": "practice"},
    racks=[f"{EX05_RACK} R10", "", "", ""],
    steps=[open_(0, EX05_OPEN), discard(0, "R10")],
    end=finished(0, [-404, 808, 808, 808]),
    seed="116_practice_okey_finish_doubles",
)

# Seat 0 (ten pairs) goes out on a later turn with B1: p = 1, m = 2. Seat 1 (melds) keeps K1 K2 K3
# B3 B4 B5 Y6 Y7 R6 R7 K5 = 49; seat 3 (five pairs) keeps K4 B2 K1 K2 K3 B3 R6 R7 B4 B5 = 37 and an
# okey R10.
scenario(
    "117_practice_pair_finish_doubles",
    "practice: a pair opener goes out in a later turn (p): m = 2: -202; opened 49 x 2 = 98; never opened 404; pair opener 2 x 37 x 2 + 101 held okey = 249",
    rules={"preset": "practice"},
    racks=[f"{PAIRS10_TILES} B1 B2",
           SEAT1_MELDER,
           "Y12",
           "K6 K6 K7 K7 B6 B6 B7 B7 Y8 Y8 R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 Y11"],
    pile="K5 R12 B5 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {B9_13}"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "K6 K6 | K7 K7 | B6 B6 | B7 B7 | Y8 Y8"), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "B1"),
    ],
    end=finished(0, [-202, 98, 404, 249]),
    seed="117_practice_pair_finish_is_not_multiplied",
)

# Solo: seat 0 keeps R10 R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3: 18 + 101 for the held okey = 119. Seed 003
# counts a held okey at the okey's number (18 + 10 = 28); RULES.md ("A held okey counts 101 instead
# of its number") stands.
scenario(
    "118_solo_no_lay_in_the_opening_turn_and_a_held_okey_costs_101",
    "solo (seed 003): no lay in the opening turn; at the pile-out an okey left in the opened rack costs 101 on top (RULES.md), not its number: 18 + 101 = 119",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R10 R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3 B4",
           "R5", "R6", "R7"],
    pile_len=3,
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"),
        lay(0, "R1 R2 R3", ok=False),
        discard(0, "B4"),
        draw(1), discard(1, "R5"), draw(2), discard(2, "R6"), draw(3), discard(3, "R7"),
    ],
    end=pile_empty([119, 202, 202, 202]),
    seed="118_solo_no_lay_in_the_opening_turn_and_held_okey_counts_its_number",
)

SEAT1_DIRECT = "B1 B2 B3 B4 B5 R1 R2 R3 R4 R5 B9 B10 B11 B12 B13 R11 R12 R13 K1 K2"
SEAT1_DIRECT_OPEN = "B1 B2 B3 B4 B5 | R1 R2 R3 R4 R5 | B9 B10 B11 B12 B13 | R11 R12 R13 | K1 K2 K3"

# Seat 0 opens 110; seat 1 opens and goes out in its first turn (a direct finish, no okey).
SEAT1_DIRECT_FINISH = dict(
    racks=[f"{K9_13} {Y9_13} Y6", f"{SEAT1_DIRECT} Y1", "", ""],
    pile="K3",
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "Y6"),
        draw(1), open_(1, SEAT1_DIRECT_OPEN), discard(1, "Y1"),
    ],
)

# Seed 004's "Direct finish: every opponent gets 404, or 808 if the final discard is the okey"
# contradicts RULES.md for an opened opponent, so RULES.md stands: the never-opened get 202 x m,
# an opened seat its rack x m. Seat 0 keeps its 11 fillers B5 K3 K7 R2 R3 R4 R6 R6 Y2 Y2 Y5 = 45.
scenario(
    "119_penalties_preset_direct_finish_opened_rack_x2_never_opened_404",
    "penalties (seed 004): a direct finish has m = 2 (RULES.md): the opened seat 0 scores its rack 45 x 2 = 90, not a flat 404; never opened 202 x 2 = 404; finisher -202",
    rules={"preset": "penalties"},
    end=finished(1, [90, -202, 404, 404]),
    seed="119_penalties_preset_direct_finish_gives_every_opponent_404",
    **SEAT1_DIRECT_FINISH,
)

# Seat 0 keeps B12 B13 K2 K13 R4 R8 R13 Y5 Y6 Y8 Y13 = 97.
scenario(
    "120_penalties_preset_direct_okey_finish_opened_rack_x4_never_opened_808",
    "penalties (seed 004): a direct finish with the okey has m = 4: the opened seat 0 scores 97 x 4 = 388, not a flat 808; never opened 202 x 4 = 808; finisher -404",
    rules={"preset": "penalties"},
    racks=[f"{K9_13} {Y9_13} Y6", f"{SEAT1_DIRECT} R10", "", ""],
    pile="K3",
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "Y6"),
        draw(1), open_(1, SEAT1_DIRECT_OPEN), discard(1, "R10"),
    ],
    end=finished(1, [388, -404, 808, 808]),
    seed="120_penalties_preset_direct_okey_finish_gives_every_opponent_808",
)

scenario(
    "121_classic_direct_finish_multiplies_an_opened_rack",
    "classic, the hand of 119 with a named rack: the opened seat 0 scores its rack x 2 (66 x 2 = 132)",
    racks=[f"{K9_13} {Y9_13} Y6 R6 R7 Y7 B7 K7 K6 B6 Y8 R8 Y2 B2", f"{SEAT1_DIRECT} Y1", "", ""],
    pile="K3",
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "Y6"),
        draw(1), open_(1, SEAT1_DIRECT_OPEN), discard(1, "Y1"),
    ],
    # seat 0 keeps R6 R7 Y7 B7 K7 K6 B6 Y8 R8 Y2 B2 = 6+7+7+7+7+6+6+8+8+2+2 = 66, x 2 = 132
    end=finished(1, [132, -202, 404, 404]),
)


# ---------------------------------------------------------------------------------------------
# More edge cases
# ---------------------------------------------------------------------------------------------

scenario(
    "122_an_empty_pile_ends_the_hand_at_the_first_discard",
    "a deal with an empty centre pile: the first discard leaves it empty and the hand ends",
    racks=["B2", "", "", ""],
    pile_len=0,
    steps=[discard(0, "B2"), draw(1, ok=False), take(1, ok=False)],
    end=pile_empty([202, 202, 202, 202]),
)

scenario(
    "123_unopened_seat_holding_both_okeys_gets_no_surcharge",
    "direct finish (m = 2): seat 1 never opened and holds both okeys: 404, nothing for the okeys",
    racks=[f"{EX05_RACK} Y1", "R10 R10", "", ""],
    steps=[open_(0, EX05_OPEN), discard(0, "Y1")],
    end=finished(0, [-202, 404, 404, 404]),
)

scenario(
    "124_explicit_reading_when_adding_an_okey_to_a_run",
    "R10=K4 added to K5-7 sits at 4 (left alone it would read 8): then K8 fits and K4 does not",
    racks=[f"K5 K6 K7 {Y9_13} {B9_13} R10 K8 K4 R2", "", "", ""],
    steps=[
        open_(0, f"K5 K6 K7 | {Y9_13} | {B9_13}"),
        add(0, 0, "R10=K4"),
        add(0, 0, "K4", ok=False),
        add(0, 0, "K8"),
        discard(0, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "125_three_tile_set_with_an_explicit_reading_still_needs_every_missing_colour",
    "R13 B13 K7=Y13: Y13 alone does not retrieve; Y13 and K13 together do (101 to seat 0)",
    ind="K6",
    racks=["R13 B13 K7 Y9 Y10 Y11 Y12 B9 B10 B11 B12 R1",
           "R8 R9 R10 R11 R12 K8 K9 K10 K11 K12 Y1 Y2 Y3 Y13 K13 Y5", "", ""],
    steps=[
        open_(0, "R13 B13 K7=Y13 | Y9 Y10 Y11 Y12 | B9 B10 B11 B12"), discard(0, "R1"),
        draw(1),
        open_(1, "R8 R9 R10 R11 R12 | K8 K9 K10 K11 K12 | Y1 Y2 Y3"),
        retrieve(1, 0, "Y13", ok=False),
        retrieve(1, 0, "Y13 K13", pen=[P(0, 101, OR)]),
        discard(1, "Y5"),
    ],
    end=in_progress(),
)

scenario(
    "126_reopening_after_a_rollback_in_the_same_turn",
    "the rolled-back opening never happened: after drawing, the player may open (without the side discard)",
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y11 Y12 Y13 R11 R12 R13", "", ""],
    avoid="K8",
    steps=[
        discard(0, "K8"),
        take(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13 | Y11 Y12 Y13", pen=[P(0, 80, SDO)]),
        ret(1, pen=[P(1, 101, TR)]),
        draw(1),
        open_(1, "B9 B10 B11 B12 B13 | Y11 Y12 Y13 | R11 R12 R13"),
        discard(1, "K9"),
    ],
    end=in_progress(),
)

scenario(
    "127_both_okeys_of_a_three_tile_set_come_back_with_every_missing_colour",
    "K13 with two okeys is a set of 13s; R13 Y13 B13 together retrieve both okeys: 101 per okey to seat 0",
    racks=["K13 R10 R10 Y10 Y11 Y12 Y13 R4 Y4 B4 K4 B2",
           "K8 K9 K10 K11 K12 B8 B9 B10 B11 B12 R1 R2 R3 R13 Y13 B13 Y1", "", ""],
    steps=[
        open_(0, "K13 R10 R10 | Y10 Y11 Y12 Y13 | R4 Y4 B4 K4"), discard(0, "B2"),
        draw(1),
        open_(1, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12 | R1 R2 R3"),
        retrieve(1, 0, "R13 Y13", ok=False),
        retrieve(1, 0, "R13 Y13 B13", pen=[P(0, 101, OR), P(0, 101, OR)]),
        discard(1, "Y1"),
    ],
    end=in_progress(),
)

scenario(
    "128_pairs_take_discard_off_does_not_stop_an_unopened_player",
    "pairs_take_discard off binds pair openers only: an unopened player may take K7 into a pair opening",
    rules={"pairs_take_discard": False},
    racks=["K7", "K7 Y2 Y2 B3 B3 K4 K4 B5 B5 R1", "", ""],
    steps=[
        discard(0, "K7"), take(1),
        open_(1, "K7 K7 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5", pen=[P(0, 140, SDO)]),
        discard(1, "R1"),
    ],
    end=in_progress(),
)

scenario(
    "129_timeout_with_only_an_okey_left_discards_it",
    "a timeout with nothing but an okey in the rack discards the okey: a direct okey finish, m = 4",
    racks=[f"{EX05_RACK} R10", "", "", ""],
    steps=[open_(0, EX05_OPEN), timeout(0)],
    end=finished(0, [-404, 808, 808, 808]),
)

scenario(
    "130_two_okeys_of_a_run_retrieved_in_one_action",
    "K9 okey okey K12: K11 with a wrong tile is rejected; K11 and K10 take both okeys back, 101 per okey",
    racks=[f"K9 R10 R10 K12 {Y9_13} {B9_13} R1", f"{Y9_13} {B10_13} K10 K11 K9 R11 R12 R13 R2", "", ""],
    steps=[
        open_(0, f"K9 R10 R10 K12 | {Y9_13} | {B9_13}"), discard(0, "R1"),
        draw(1),
        open_(1, f"{Y9_13} | {B10_13} | R11 R12 R13"),
        retrieve(1, 0, "K11 K9", ok=False),
        retrieve(1, 0, "K11 K10", pen=[P(0, 101, OR), P(0, 101, OR)]),
        discard(1, "R2"),
    ],
    end=in_progress(),
)

scenario(
    "131_okey_in_the_middle_of_a_run",
    "K5 okey K7: the okey is K6; the run grows at both ends in one action and K6 retrieves the okey",
    racks=[f"K5 R10 K7 {Y9_13} {B9_13} K6 K4 K8 B2", "", "", ""],
    steps=[
        open_(0, f"K5 R10 K7 | {Y9_13} | {B9_13}"),
        add(0, 0, "K6", ok=False),
        add(0, 0, "K4 K8"),
        retrieve(0, 0, "K6"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# Seat 0 keeps R1 R2 R3 Y1 Y2 Y3 B1 B2 K1 K2 K3 = 6 + 6 + 3 + 6 = 21.
scenario(
    "132_the_last_discard_before_the_pile_empties_is_still_charged",
    "the discard that leaves the pile empty ends the hand, and a playable one still costs 101",
    racks=[f"{K9_13} {Y9_13} B3 R1 R2 R3 Y1 Y2 Y3 B1 B2 K1 K2 K3", "K8", "", ""],
    pile_len=1,
    steps=[
        open_(0, f"{K9_13} | {Y9_13}"), discard(0, "B3"),
        draw(1), discard(1, "K8", pen=[P(1, 101, DP)]),
        draw(2, ok=False),
    ],
    end=pile_empty([21, 202, 202, 202]),
)

scenario(
    "133_auto_mode_has_nothing_to_call",
    "with playable discards charged automatically, call_playable is rejected and the turn goes on",
    racks=["B2", "Y3", "", ""],
    steps=[discard(0, "B2"), call(1, ok=False), draw(1), discard(1, "Y3")],
    end=in_progress(),
)

# Seat 0's set K5 Y5 okey okey stands for the two missing colours (R5 and B5); 20 + 55 + 55 = 130.
scenario(
    "134_four_tile_set_with_two_okeys_gives_back_one",
    "a 4-tile set with two okeys: supplying one missing colour frees one okey (101 to its placer), the other stays",
    racks=[f"K5 Y5 R10 R10 {Y9_13} {B9_13} B2", f"{Y9_13} {B10_13} R11 R12 R13 B5 R5 Y2", "", ""],
    steps=[
        open_(0, f"K5 Y5 R10 R10 | {Y9_13} | {B9_13}"), discard(0, "B2"),
        draw(1),
        open_(1, f"{Y9_13} | {B10_13} | R11 R12 R13"),
        retrieve(1, 0, "B5", pen=[P(0, 101, OR)]),
        retrieve(1, 0, "B5", ok=False),
        retrieve(1, 0, "R5", pen=[P(0, 101, OR)]),
        discard(1, "Y2"),
    ],
    end=in_progress(),
)

# K12 with two okeys is worth 36 either as 11-12-13 or as three 12s: the engine reads a run, so
# it grows with K10 and takes no other colour. 36 + 55 + 55 = 146.
scenario(
    "135_a_tile_with_two_okeys_worth_the_same_either_way_is_a_run",
    "K12 okey okey reads as the run K11-K12-K13 (36, equal to a set of 12s): K10 extends it, Y12 does not fit",
    racks=[f"K12 R10 R10 {Y9_13} {B9_13} K10 Y12 B2", "", "", ""],
    steps=[
        open_(0, f"K12 R10 R10 | {Y9_13} | {B9_13}"),
        add(0, 0, "Y12", ok=False),
        add(0, 0, "K10"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)
