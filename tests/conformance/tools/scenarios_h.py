"""Scenarios from an eighth audit of the rules against RULES.md and the seeds (241 on): each pins a
point no earlier scenario pinned (an okey added to a set and retrieved with the colour it stands
for, a call on a tile that fits nothing followed by a take, an okey read 2-3-4 in an exact 101 and
what the run then takes, a pair opener laying a retrieved okey in a new pair, four pair openings
cancelling with partners, a false joker as the okey K1 taken into an opening, a held okey K1
costing 101 under `solo`, and a retrieval waiting for the next turn with
`act_after_opening_same_turn` off). Registered by make_scenarios.py. Expected results are worked
out by hand from RULES.md and the seeds.

The audit filled racks with its own generator, not okeygen, so the racks here are not the audited
ones: each scenario's filler tiles are drawn with the audit's file name (`p01_...`) as the seed,
and every tile a step uses (discards included) is named. Where a score depends on filler tiles
left in a rack, the comment lists that rack as it stands after the last step. Indicator R9 (okeys
R10, F plays as R10) unless a scenario says otherwise.
"""

from okeygen import (SCENARIOS, P, add, call, cancelled, discard, draw, in_progress, lay, open_,
                     pile_empty, ret, retrieve, scenario, take)
from scenarios_b import DP, OR, SDO


def sc(file, seed, name, **kw):
    """Registers `file` with its fillers drawn for `seed` (the audit's file name)."""
    scenario(seed, name, **kw)
    SCENARIOS[-1]["file"] = file


# ---------------------------------------------------------------------------------------------
# Okey retrieval, calls and readings: an okey added to a set, a call on a tile that fits nothing,
# an okey read 2-3-4, a pair opener pairing the okey it retrieved
# ---------------------------------------------------------------------------------------------

# RULES.md "After opening": "In a set, an okey stands for any missing colour", "in a 4-tile set,
# the one tile it stands for" retrieves it, and "If the okey was placed by another player, that
# player gets 101" - an okey put there by an add is placed by the adder. Seat 0 opens K9-K13 (55) +
# Y9-Y13 (55) + B3 K3 R3 (9) = 119 and adds the okey (the set is then the 4 tiles B3 K3 R3 okey,
# the okey standing for Y3, the only missing colour); seat 1 opens B9-B13 + K9-K13 (110) and
# retrieves it with Y3: 101 to seat 0.
sc(
    "241_okey_added_to_a_set_retrieved_with_the_missing_colour_charges_the_adder",
    "p01_okey_added_to_set_retrieved_charges_adder",
    "an okey added to a 3-tile set is retrieved by another with the colour it stands for: the adder pays 101",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B3 K3 R3 R10 R5",
           "B9 B10 B11 B12 B13 K9 K10 K11 K12 K13 Y3 R6", "", ""],
    avoid="K8 Y8 B8 Y3",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | B3 K3 R3"),
        add(0, 2, "R10"),
        discard(0, "R5"),
        draw(1),
        open_(1, "B9 B10 B11 B12 B13 | K9 K10 K11 K12 K13"),
        retrieve(1, 2, "Y3", pen=[P(0, 101, OR)]),
        discard(1, "R6"),
    ],
    end=in_progress(),
)


# RULES.md "Penalties during play": with `playable_discard: called`, "a call on a tile that does
# not fit is accepted and charges nobody"; the side discard "May be taken only if it is not an okey
# and not playable" - B2 fits nothing (the table is empty), so seat 1 may still take it after its
# call; it returns it ("before any table change that turn": free) and draws.
sc(
    "242_called_mode_a_call_on_a_tile_that_fits_nothing_then_the_caller_takes_it",
    "p02_called_nonfit_call_then_take",
    "called mode: a call on a tile that does not fit charges nobody and does not stop the caller taking it",
    rules={"playable_discard": "called"},
    racks=["B2", "B3 B4 Y5", "", ""],
    steps=[
        discard(0, "B2"),
        call(1),
        take(1), ret(1), draw(1),
        discard(1, "Y5"),
    ],
    end=in_progress(),
)


# RULES.md "Melds": "When an okey's reading is not forced by its neighbours, it takes the reading
# worth most" - okey K2 K3 reads 2-3-4 (9), not 1-2-3 (6): 9 + Y10-Y13 (46) + B10-B13 (46) = 101
# opens exactly. "An okey's place in a run is fixed when it is laid": the run is K2 K3 okey(K4), so
# K4 fits no end (only a retrieval could take it: no playable discard, as in 167) while K1 fits
# below: seat 1's K1 costs 101 discard_playable.
sc(
    "243_okey_after_2_3_reads_4_for_an_exact_101_then_1_fits_and_4_does_not",
    "p03_okey_low_reads_2_3_4_exact_101",
    "okey K2 K3 reads 2-3-4 worth 9: with 92 more it opens at exactly 101; K1 then fits below, K4 does not",
    racks=["R10 K2 K3 Y10 Y11 Y12 Y13 B10 B11 B12 B13 K4", "K1", "", ""],
    avoid="K1 K4 K5 Y9 B9",
    steps=[
        open_(0, "R10 K2 K3 | Y10 Y11 Y12 Y13 | B10 B11 B12 B13"),
        discard(0, "K4"),
        draw(1),
        discard(1, "K1", pen=[P(1, 101, DP)]),
    ],
    end=in_progress(),
)


# RULES.md "After opening": "Retrieve an okey ... in a run, the tile at its place"; "If the okey was
# placed by another player, that player gets 101"; "A retrieved okey need not be used in the same
# turn" - here it is, at once: a pair opener lays "pairs only", and "one real tile with an okey" is
# a pair. Seat 0 opens K11 K12 okey (the okey reads K13: 36) + Y9-Y13 + B9-B13 = 146; seat 1 opens
# 5 pairs, supplies K13 (101 to seat 0) and lays Y6 + the okey.
sc(
    "244_pair_opener_retrieves_an_okey_and_lays_it_in_a_new_pair",
    "p04_pair_opener_retrieves_okey_and_pairs_it",
    "a pair opener retrieves an okey from a run (101 to its placer) and pairs it with a tile the same turn",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 Y4",
           "R1 R1 Y1 Y1 B1 B1 K1 K1 R2 R2 K13 Y6 B6", "", ""],
    avoid="K10 Y8 B8 K13",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "Y4"),
        draw(1),
        open_(1, "R1 R1 | Y1 Y1 | B1 B1 | K1 K1 | R2 R2"),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        lay(1, "Y6 R10"),
        discard(1, "B6"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Cancellation with partners, the okey K1 (false joker and held okey), the opening turn
# ---------------------------------------------------------------------------------------------

# RULES.md "Opening": "If all four players open with pairs, the hand is cancelled at once, when the
# fourth pair opening is accepted" - with `partners` too (partners only change whose thresholds an
# opening raises, and `standard` raises none). Scores 0 (docs/rules.md decision 3); nothing more can
# be done.
sc(
    "245_partners_four_pair_openings_cancel_the_hand",
    "p05_partners_four_pair_openings_cancel",
    "partners: all four seats opening with pairs cancel the hand",
    rules={"partners": True},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 R8",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 K7",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B10",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K11"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "R8"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"), discard(1, "K7"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(2, "B10"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5"),
        discard(3, "K11", ok=False),
    ],
    end={**cancelled(), "scores": [0, 0, 0, 0]},
)


# RULES.md "Tiles and deal": indicator 13 -> okey 1, and "A false joker is not wild: it is a plain
# tile with the okey's colour and number" (K1); "The side discard": used in an accepted opening it
# costs its discarder "10 x its number (meld opening) ... A false joker's number is the okey's":
# 10 x 1 = 10. F K2 K3 (6) + B9-B13 (55) + Y10-Y13 (46) = 107 opens.
sc(
    "246_indicator_13_false_joker_as_k1_side_discard_costs_10",
    "p06_false_joker_as_k1_side_discard_costs_10",
    "indicator K13: the false joker is a K1; taken into a meld opening it costs its discarder 10",
    ind="K13",
    racks=["F", "K2 K3 B9 B10 B11 B12 B13 Y10 Y11 Y12 Y13 R5", "", ""],
    avoid="K4 B8 Y9",
    steps=[
        discard(0, "F"),
        take(1),
        open_(1, "F K2 K3 | B9 B10 B11 B12 B13 | Y10 Y11 Y12 Y13", pen=[P(0, 10, SDO)]),
        discard(1, "R5"),
    ],
    end=in_progress(),
)


# Seed 003 (solo) row 33: "Okeys and false jokers left in hand count as the okey's number" - for a
# real okey RULES.md stands: "A held okey counts 101 instead of its number". With indicator K13 the
# okey is K1 ("13 -> 1", RULES.md), so seed 003's count would be 1: the surcharge is 101 all the
# same. Row 34: "If the middle pile runs dry, nobody gets the -101, but everyone else is still
# scored" (m = 1). Seat 1 draws the pile's only tile and discards: pile empty.
# seat 0: R7 R8 R13 Y2 B3 B10 B12 K3 K7 K7 + okey K1: 7+8+13+2+3+10+12+3+7+7 = 72 -> 72 + 101 = 173
sc(
    "247_solo_indicator_13_held_okey_k1_costs_101_at_a_pile_out",
    "p07_solo_okey_k1_held_counts_1",
    "solo, okey K1: a held okey costs 101 on top of an opened rack at a pile-out, not its number 1 (72 + 101 = 173); never opened 202",
    ind="K13",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 K1 R2", "R3", "", ""],
    avoid="K8 Y8",
    pile_len=1,
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "R2"),
        draw(1), discard(1, "R3"),
    ],
    end=pile_empty([173, 202, 202, 202]),
)


# RULES.md "After opening": "Opening and further actions in the same turn are allowed (option
# `act_after_opening_same_turn`, default on; off, every lay, add or retrieve in the opening turn is
# rejected)". Seat 0 opens K11 K12 okey (K13) + Y9-Y13 + B9-B13 = 146; seat 1 opens R11-R13 (36) +
# K9-K13 (55) + Y6-Y8 (21) = 112: its retrieval with K13 that turn is rejected; in its next turn
# it is accepted and costs the placer, seat 0, 101.
sc(
    "248_option_off_a_retrieve_waits_for_the_turn_after_the_opening",
    "p08_no_retrieve_in_opening_turn_option_off",
    "option act_after_opening_same_turn off: a retrieve in the opening turn is rejected, the next turn it is accepted",
    rules={"act_after_opening_same_turn": False},
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R2 R3",
           "R11 R12 R13 K9 K10 K11 K12 K13 Y6 Y7 Y8 K13 R4",
           "B2", "B3"],
    avoid="K10 Y8 B8 K8 Y5 Y9",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "R2"),
        draw(1),
        open_(1, "R11 R12 R13 | K9 K10 K11 K12 K13 | Y6 Y7 Y8"),
        retrieve(1, 0, "K13", ok=False),
        discard(1, "R4"),
        draw(2), discard(2, "B2"),
        draw(3), discard(3, "B3"),
        draw(0), discard(0, "R3"),
        draw(1),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
    ],
    end=in_progress(),
)
