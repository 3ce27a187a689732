"""Scenarios from a seventh audit of the rules against RULES.md and the seeds (207 on): each pins a
point no earlier scenario pinned (okey readings in runs and sets at exactly 101 and one short, what
a run or a set with an okey takes, pair openings with okeys, the side discard added with a second
tile or taken into a wrong opening, a retrieved okey discarded or laid again, pile-outs with held
okeys and false jokers under three presets, the 1 after 13 with and without the wrap, and one pair
finish and one okey finish, both in a later turn, played under each of the five presets).
Registered by make_scenarios.py. Expected results are worked out by hand from RULES.md and the
seeds.

As in scenarios_e.py and scenarios_f.py, each scenario's filler tiles are drawn with the seed the
audit's generator used (the audit's own file name, `m01_...`, `c01_...`), so the racks are exactly
the audited ones. Where a score depends on filler tiles left in a rack, the comment lists that rack
as it stands after the last step. Indicator R9 (okeys R10, F plays as R10) unless a scenario says
otherwise.
"""

from okeygen import (SCENARIOS, P, add, call, discard, draw, finished, in_progress, lay, open_,
                     pile_empty, ret, retrieve, scenario, take)
from scenarios_b import DO, DP, OR, SDO, WO


def sc(file, seed, name, **kw):
    """Registers `file` with the racks the audit drew for `seed`."""
    scenario(seed, name, **kw)
    SCENARIOS[-1]["file"] = file


# Y9-Y13 and B9-B13: 55 + 55 = 110, an opening on their own.
OPEN_HI = "Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"
HI = "Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13"

# ---------------------------------------------------------------------------------------------
# Readings: runs in any order, okeys in runs and sets, exactly 101 and one short, pairs of okeys
# ---------------------------------------------------------------------------------------------

# RULES.md "Melds": a run is consecutive numbers of one colour; the order the tiles are listed in
# does not matter. K7-K8-K9 (24) + Y9-Y13 (55) + B4-B7 (22) = 101.
sc(
    "207_run_tiles_listed_out_of_order_are_still_a_run",
    "m02_run_tiles_listed_out_of_order_are_still_a_run",
    "a run listed K9 K7 K8 is the run 7-8-9 (24): 24+55+22 = 101 opens",
    racks=["K9 K7 K8 Y13 Y11 Y12 Y10 Y9 B4 B6 B5 B7 B2", "", "", ""],
    steps=[open_(0, "K9 K7 K8 | Y13 Y11 Y12 Y10 Y9 | B4 B6 B5 B7"), discard(0, "B2")],
    end=in_progress(),
)

# RULES.md: "When an okey's reading is not forced by its neighbours, it takes the reading worth
# most" - listed first, the okey still reads K4 (2-3-4 = 9), not K1 (1-2-3 = 6):
# 9 + 55 + B8-B11 (38) = 102. The run is then K2-K4 and takes K5.
sc(
    "208_okey_listed_first_in_a_run_takes_the_reading_worth_most",
    "m01_okey_listed_first_in_a_run_takes_the_reading_worth_most",
    "R10(okey) K2 K3: the listing order does not fix the okey; it reads K4 (2-3-4 = 9), so 9+55+38 = 102 opens; K5 then fits",
    racks=["R10 K2 K3 Y9 Y10 Y11 Y12 Y13 B8 B9 B10 B11 K5 B2", "", "", ""],
    avoid="K4 K5 K1",
    steps=[open_(0, "R10 K2 K3 | Y9 Y10 Y11 Y12 Y13 | B8 B9 B10 B11"), add(0, 0, "K5"), discard(0, "B2")],
    end=in_progress(),
)

# RULES.md: there is no 0, so K1 K2 K3 okey can only read 1-2-3-4 (10): 10 + 55 + B11-B13 (36) = 101.
sc(
    "209_okey_at_the_top_of_a_four_tile_run_counts_in_an_exact_101",
    "c04_okey_at_the_top_of_a_four_tile_run_counts_in_an_exact_101",
    "K1 K2 K3 okey reads 1-2-3-4 (10): 10 + 55 + 36 = 101 opens exactly",
    racks=["K1 K2 K3 R10 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 Y1", "", "", ""],
    steps=[open_(0, "K1 K2 K3 R10 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13"), discard(0, "Y1")],
    end=in_progress(),
)

# RULES.md "Tiles and deal": "A false joker is not wild: it is a plain tile with the okey's colour and
# number" - R7 R8 R9 F is R7-R10 (34): 34 + 55 + K3-K5 (12) = 101; K11 F K13 (F = R10) is no run,
# so that first opening is rejected whole, no penalty.
sc(
    "210_false_joker_in_a_run_counts_the_okey_number_exact_101",
    "c06_false_joker_in_a_run_counts_the_okey_number_exact_101",
    "R7 R8 R9 F reads 7-8-9-10 (34, F is the red 10, not wild): 34 + 55 + 12 = 101 opens; K11 F K13 is no run",
    racks=["R7 R8 R9 F Y9 Y10 Y11 Y12 Y13 K3 K4 K5 K11 K13 Y1", "", "", ""],
    steps=[
        open_(0, "K11 F K13 | Y9 Y10 Y11 Y12 Y13 | K3 K4 K5 | R7 R8 R9", ok=False),
        open_(0, "R7 R8 R9 F | Y9 Y10 Y11 Y12 Y13 | K3 K4 K5"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md "Opening": an okey in a set counts the set's number: Y12 B12 okey = 36; with K9-K13 (55)
# and B1-B3 (6) that is 97 -> wrong opening, 101, only a discard left (a second opening that turn
# is rejected). Next turn B1-B4 (10) makes exactly 101.
sc(
    "211_okey_in_a_set_counts_its_number_one_short_is_wrong",
    "c05_okey_in_a_set_counts_its_number_one_short_is_wrong",
    "Y12 B12 okey (36) + K9-K13 (55) + B1-B3 (6) = 97 is a wrong opening (101, only the discard left); next turn with B1-B4 (10) it is exactly 101",
    racks=["Y12 B12 R10 K9 K10 K11 K12 K13 B1 B2 B3 B4 Y1 Y5", "Y2", "Y3", "Y4"],
    steps=[
        open_(0, "Y12 B12 R10 | K9 K10 K11 K12 K13 | B1 B2 B3", pen=[P(0, 101, WO)]),
        open_(0, "Y12 B12 R10 | K9 K10 K11 K12 K13 | B1 B2 B3 B4", ok=False),
        discard(0, "Y1"),
        draw(1), discard(1, "Y2"), draw(2), discard(2, "Y3"), draw(3), discard(3, "Y4"),
        draw(0), open_(0, "Y12 B12 R10 | K9 K10 K11 K12 K13 | B1 B2 B3 B4"), discard(0, "Y5"),
    ],
    end=in_progress(),
)

# RULES.md "After opening": "An okey's place in a run is fixed when it is laid". Okey K11 K12 K13
# can only read K10 (46; 46 + 110 opens); K10 cannot be added (its place is the okey's), K9 goes
# below the okey, and K10 then retrieves the okey (own okey: no charge).
sc(
    "212_okey_at_the_low_end_of_a_run_is_fixed_there",
    "c03_okey_at_the_low_end_of_a_run_is_fixed_there",
    "okey K11 K12 K13 reads K10 (forced; 46): 46+110 opens; K9 fits below the okey, K10 only retrieves it",
    racks=[HI + " R10 K11 K12 K13 K9 K10 Y1", "", "", ""],
    steps=[
        open_(0, OPEN_HI + " | R10 K11 K12 K13"),
        add(0, 2, "K10", ok=False),
        add(0, 2, "K9"),
        retrieve(0, 2, "K10"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md "After opening": at most 2 tiles onto the same end in one action. K5-K7 takes [K9, okey]
# (the okey fills K8); [K10, okey] would need K8 K9 K10, three tiles, and is rejected. After that
# K8 has no place (the okey holds it) and K10 goes on top.
sc(
    "213_okey_with_a_real_tile_on_one_end_fills_the_gap",
    "c01_okey_with_a_real_tile_on_one_end_fills_the_gap",
    "K5-K6-K7 + [K9, okey]: the okey must be K8 (two tiles on the high end); [K10, okey] would need three on one end and is rejected",
    racks=[HI + " K5 K6 K7 K9 K10 R10 K8 Y1", "", "", ""],
    steps=[
        open_(0, OPEN_HI + " | K5 K6 K7"),
        add(0, 2, "K10 R10", ok=False),
        add(0, 2, "K9 R10"),
        add(0, 2, "K8", ok=False),
        add(0, 2, "K10"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md: 1 is only low and nothing follows 13 without the wrap option, so two okeys added to
# K11-K13 go below it (K9, K10); K8 then fits, and K9 K10 retrieve both okeys (own: no charge).
sc(
    "214_two_okeys_added_to_a_run_ending_at_13_go_below",
    "c02_two_okeys_added_to_a_run_ending_at_13_go_below",
    "K11-K12-K13 takes two okeys only at its low end (K9, K10); K8 then fits and the okeys come back with K9 K10",
    racks=[HI + " K11 K12 K13 R10 R10 K8 K9 K10 Y1", "", "", ""],
    steps=[
        open_(0, OPEN_HI + " | K11 K12 K13"),
        add(0, 2, "R10 R10"),
        add(0, 2, "K8"),
        retrieve(0, 2, "K9 K10"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md "Melds": a set is one number in 3 or 4 *different* colours: Y7 Y7 B7 and Y7 B7 K7 B7 are
# invalid melds, so the openings are rejected (no penalty); Y7 B7 K7 (21) + 110 opens.
sc(
    "215_set_with_a_repeated_colour_is_no_set",
    "c08_set_with_a_repeated_colour_is_no_set",
    "Y7 Y7 B7 and Y7 B7 K7 B7 are no sets: rejected without penalty",
    racks=["Y7 Y7 B7 B7 K7 " + HI + " Y1", "", "", ""],
    steps=[
        open_(0, "Y7 Y7 B7 | " + OPEN_HI, ok=False),
        open_(0, "Y7 B7 K7 B7 | " + OPEN_HI, ok=False),
        open_(0, "Y7 B7 K7 | " + OPEN_HI),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md: an okey stands in for one tile of a run or set; Y5 Y5 okey repeats yellow (no set) and
# is no run, so the opening is rejected without penalty; the rest alone (110) opens.
sc(
    "216_set_with_an_okey_and_a_repeated_colour_is_rejected",
    "m03_set_with_an_okey_and_a_repeated_colour_is_rejected",
    "Y5 Y5 okey is no set (a colour repeats) and no run: the opening is rejected without penalty; without it the opening stands",
    racks=["Y5 Y5 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 B2", "", "", ""],
    steps=[
        open_(0, "Y5 Y5 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", ok=False),
        open_(0, "Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# RULES.md "After opening": in a set an okey stands for any missing colour, so a real tile of a
# missing colour may be added "while the set has fewer than 4 tiles". Y5 B5 okey takes R5 (the
# okey becomes K5); R5 K5 together would make 5 tiles; after R5 the set is full and takes no K5.
# K5 then fits no add (only a retrieval could take it), so its discard is free (as in 167).
sc(
    "217_three_tile_set_with_an_okey_takes_one_more_colour_only",
    "m04_three_tile_set_with_an_okey_takes_one_more_colour_only",
    "Y5 B5 okey takes one missing colour (R5) but not two at once, and once 4 tiles nothing more; K5 then fits no add and is no playable discard",
    racks=["Y5 B5 R10 K9 K10 K11 K12 K13 B9 B10 B11 B12 B13 R5 K5 Y2", "", "", ""],
    avoid="K5",
    steps=[
        open_(0, "Y5 B5 R10 | K9 K10 K11 K12 K13 | B9 B10 B11 B12 B13"),
        add(0, 0, "R5 K5", ok=False),
        add(0, 0, "R5"),
        add(0, 0, "K5", ok=False),
        discard(0, "K5"),
    ],
    end=in_progress(),
)

# RULES.md: a set has at most 4 tiles, an okey included. Y5 B5 R5 K5 (20) + K9-K13 (55) + B9-B12
# (42) = 117 opens; the okey is refused by the full set and goes onto B9-B12 instead.
sc(
    "218_an_okey_cannot_be_added_to_a_full_set",
    "m05_an_okey_cannot_be_added_to_a_full_set",
    "a set of four colours takes nothing, not even an okey; the okey then goes onto a run",
    racks=["Y5 B5 R5 K5 K9 K10 K11 K12 K13 B9 B10 B11 B12 R10 Y2", "", "", ""],
    steps=[
        open_(0, "Y5 B5 R5 K5 | K9 K10 K11 K12 K13 | B9 B10 B11 B12"),
        add(0, 0, "R10", ok=False),
        add(0, 2, "R10"),
        discard(0, "Y2"),
    ],
    end=in_progress(),
)

# RULES.md "Melds": "Two okeys are never a pair": a pair opening with R10 R10 is rejected (no
# penalty); K3 + okey is a pair, so K3 R10 with four real pairs opens.
sc(
    "219_pair_opening_with_okey_pairs_and_two_okeys_rejected",
    "c07_pair_opening_with_okey_pairs_and_two_okeys_rejected",
    "a pair of two okeys rejects a pair opening without penalty; four real pairs and K3+okey open (5 pairs)",
    racks=["R10 R10 K3 B7 B7 Y2 Y2 K12 K12 B4 B4 Y1", "", "", ""],
    steps=[
        open_(0, "R10 R10 | B7 B7 | Y2 Y2 | K12 K12 | B4 B4", ok=False),
        open_(0, "K3 R10 | B7 B7 | Y2 Y2 | K12 K12 | B4 B4"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# The side discard
# ---------------------------------------------------------------------------------------------

# RULES.md "The side discard": it may be taken if it is not playable, and an opened player must use
# it in a table action that turn. K5 alone does not fit K7-K9 (so seat 3's discard is free and may
# be taken); with K6 it goes onto the low end (2 tiles, one action), which uses it.
# 24 + 55 + 55 = 134 opens.
sc(
    "220_opened_player_adds_the_side_discard_with_a_second_tile_on_one_end",
    "m06_opened_player_adds_the_side_discard_with_a_second_tile_on_one_end",
    "K5 alone fits nowhere so it may be taken; K5+K6 together go onto the low end of K7-K8-K9; the side discard is used",
    racks=["K7 K8 K9 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 K6 Y2 Y3", "B2", "B3", "K5"],
    avoid="K5 K6 K10 K4",
    steps=[
        open_(0, "K7 K8 K9 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"), discard(0, "Y2"),
        draw(1), discard(1, "B2"), draw(2), discard(2, "B3"), draw(3), discard(3, "K5"),
        take(0), add(0, 0, "K5 K6"), discard(0, "Y3"),
    ],
    end=in_progress(),
)

# RULES.md "Opening": valid melds below the threshold with the side discard -> wrong opening (101 to
# the opener); the side discard goes back and the player must draw before discarding; no 10x charge
# (only an accepted opening charges the discarder). K6-K8 (21) + Y9-Y13 (55) = 76. Seat 1's B1 is
# not playable, so seat 2 may take it (and give it back).
sc(
    "221_side_discard_taken_into_a_below_threshold_opening_goes_back",
    "c09_side_discard_taken_into_a_below_threshold_opening_goes_back",
    "seat 1 takes K8 and opens 21+55 = 76 with it: wrong opening 101, K8 goes back, seat 1 must draw; no 10x charge; seat 2 may then take seat 1's discard",
    racks=["K8 Y1", "K6 K7 Y9 Y10 Y11 Y12 Y13 B1", "", ""],
    steps=[
        discard(0, "K8"),
        take(1),
        open_(1, "K6 K7 K8 | Y9 Y10 Y11 Y12 Y13", pen=[P(1, 101, WO)]),
        discard(1, "B1", ok=False),
        take(1, ok=False),
        draw(1),
        discard(1, "B1"),
        take(2), ret(2), draw(2),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Discards and retrieval
# ---------------------------------------------------------------------------------------------

# RULES.md: "If the okey was placed by another player, that player gets 101" (okey_retrieved), and
# discarding an okey costs 101 (discard_okey); "A discarded okey can never be taken". Seat 0 opens
# K5 okey K7 (18) + 110; seat 1 opens Y8 B8 K8 (24) + K9-K13 (55) + R11-R13 (36) = 115.
sc(
    "222_retrieved_okey_discarded_costs_both_penalties",
    "m07_retrieved_okey_discarded_costs_both_penalties",
    "seat 1 opens, retrieves seat 0's okey (seat 0 +101) and discards it (seat 1 +101 discard_okey); seat 2 cannot take it",
    racks=["K5 R10 K7 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 Y2",
           "K6 Y8 B8 K8 K9 K10 K11 K12 K13 R11 R12 R13", "", ""],
    avoid="K4 R8",
    steps=[
        open_(0, "K5 R10 K7 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"), discard(0, "Y2"),
        draw(1), open_(1, "Y8 B8 K8 | K9 K10 K11 K12 K13 | R11 R12 R13"),
        retrieve(1, 0, "K6", pen=[P(0, 101, OR)]),
        discard(1, "R10", pen=[P(1, 101, DO)]),
        take(2, ok=False), draw(2),
    ],
    end=in_progress(),
)

# RULES.md: okey_retrieved goes to "the placer" - a partner too (as 195) - and an okey laid again
# by its retriever is then that seat's (docs/rules.md decision 18). Seat 2 opens K9-K13 (55) +
# R11-R13 (36) + Y5-Y7 (18) = 109, retrieves seat 0's okey and lays B6 B7 okey (the okey reads B8,
# worth more than B5) as meld 6; seat 3 opens 36 + 36 + 36 = 108 and retrieves it with B8.
sc(
    "223_partners_a_retrieved_okey_charges_its_placer_a_partner_too_then_the_new_placer",
    "d03_partners_okey_retrieved_charges_the_placer_even_from_the_partner_and_relaid_okey_charges_the_new_placer",
    "partners: seat 2 retrieves partner seat 0's okey (seat 0 +101) and lays it in B6 B7 okey; seat 3 retrieves it with B8 (seat 2 +101)",
    rules={"partners": True},
    racks=["K5 R10 K7 " + HI + " Y1",
           "B1",
           "K6 K9 K10 K11 K12 K13 R11 R12 R13 Y5 Y6 Y7 B6 B7 K1",
           "Y11 Y12 Y13 B11 B12 B13 K11 K12 K13 B8 K2"],
    steps=[
        open_(0, "K5 R10 K7 | " + OPEN_HI), discard(0, "Y1"),
        draw(1), discard(1, "B1"),
        draw(2), open_(2, "K9 K10 K11 K12 K13 | R11 R12 R13 | Y5 Y6 Y7"),
        retrieve(2, 0, "K6", pen=[P(0, 101, OR)]),
        lay(2, "B6 B7 R10"), discard(2, "K1"),
        draw(3), open_(3, "Y11 Y12 Y13 | B11 B12 B13 | K11 K12 K13"),
        retrieve(3, 6, "B8", pen=[P(2, 101, OR)]),
        discard(3, "K2"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Pile-outs: no indicator bonus, held okeys and false jokers, under classic, solo and penalties
# ---------------------------------------------------------------------------------------------
# One deal per preset: seat 0 opens 110 keeping R9 (the indicator's twin) and an okey; seat 1 never
# opens holding F, seat 2 never opens holding the other okey; seat 3 draws the pile's last tile,
# opens 5 pairs and discards: pile empty, m = 1 (RULES.md "End of the hand").


def pile_out(file, seed, name, preset, scores):
    sc(
        file, seed, name,
        rules={"preset": preset},
        racks=[HI + " R9 R10 Y1", "F K4", "R10 K5", "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 K6"],
        pile="K1 K2 K3",
        pile_len=3,
        steps=[
            open_(0, OPEN_HI), discard(0, "Y1"),
            draw(1), discard(1, "K4"),
            draw(2), discard(2, "K5"),
            draw(3), open_(3, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(3, "K6"),
        ],
        end=pile_empty(scores),
    )


# RULES.md / seed 000 row 7 ("There is no indicator declaration or bonus"): R9 counts 9. Opened
# rack + 101 per okey held; never opened 202 whatever they hold (no surcharge, F or okey); a pair
# opener twice its rack.
# seat 0: R5 R7 R9 Y4 Y5 Y10 Y12 K2 K4 K10 + okey: 5+7+9+4+5+10+12+2+4+10 = 68 -> 68 + 101 = 169
# seat 3: R6 Y2 Y9 B7 B8 B13 K1 K3 K6 K8 K11: 6+2+9+7+8+13+1+3+6+8+11 = 74 -> 2 x 74 = 148
pile_out(
    "224_pile_empty_no_indicator_bonus_never_opened_202_with_okey_or_false_joker",
    "e01_pile_empty_no_indicator_bonus_never_opened_202_with_okey_or_false_joker",
    "pile empty: no indicator bonus (the indicator's twin R9 counts 9); opened 68 + 101 held okey; never opened 202 with or without okey or F; pair opener 2x74",
    "classic", [169, 202, 202, 148],
)

# Seed 003 (solo): "If the middle pile runs dry, nobody gets the -101, but everyone else is still
# scored". Its "Okeys and false jokers left in hand count as the okey's number" contradicts RULES.md
# for a real okey ("A held okey counts 101 instead of its number"), so RULES.md stands: the okey is
# 101 on top; a false joker still counts the okey's number.
# seat 0: R8 R8 R9 R11 R13 Y3 Y4 B6 B8 K10 + okey: 8+8+9+11+13+3+4+6+8+10 = 80 -> 80 + 101 = 181
# seat 3: R1 R6 R12 Y6 Y6 Y9 Y12 B8 K3 K3 K5: 1+6+12+6+6+9+12+8+3+3+5 = 71 -> 2 x 71 = 142
pile_out(
    "225_solo_pile_empty_held_okey_costs_101",
    "e02_solo_pile_empty_held_okey_counts_its_number",
    "solo pile empty: m = 1; the held okey costs 101 on top of the opened rack (80 + 101, not seed 003's okey number); never opened 202 with an okey or F; pair opener 2x71",
    "solo", [181, 202, 202, 142],
)

# Seed 004 (penalties) rows 19-22: never opened 202, opened at face value (doubled for a pair opener),
# + 101 per okey held - the same as RULES.md with m = 1.
# seat 0: R3 R4 R8 R9 K1 K6 K7 K10 K11 K12 + okey: 3+4+8+9+1+6+7+10+11+12 = 71 -> 71 + 101 = 172
# seat 3: R5 R11 Y2 Y7 Y8 B8 B10 B13 K3 K8 K13: 5+11+2+7+8+8+10+13+3+8+13 = 88 -> 2 x 88 = 176
pile_out(
    "226_penalties_pile_empty_scored_plainly",
    "e03_penalties_pile_empty_scored_plainly",
    "penalties preset pile empty: scored plainly (71+101, 202, 202, 2x88)",
    "penalties", [172, 202, 202, 176],
)

# ---------------------------------------------------------------------------------------------
# The 1 after 13: not playable in classic, playable (when called) with the wrap; wrapped runs
# ---------------------------------------------------------------------------------------------

# RULES.md "Melds": 1 is only low without run_wraps_12_13_1, so K11-K13 takes no K1: seat 1's K1 is
# no playable discard, seat 2 may take it and opens K1 K2 K3 (6) + 110 = 116; the side discard in a
# meld opening costs its discarder 10 x 1 = 10.
sc(
    "227_classic_1_after_13_is_not_playable_and_may_be_taken",
    "d02_classic_1_after_13_is_not_playable_and_may_be_taken",
    "classic: K11-K12-K13 takes no 1 (no wrap): seat 1's K1 costs nothing and seat 2 may take it into K1 K2 K3 in its opening",
    racks=[HI + " K11 K12 K13 Y1", "K1", "K2 K3 " + HI + " Y2", ""],
    steps=[
        open_(0, OPEN_HI + " | K11 K12 K13"), discard(0, "Y1"),
        draw(1), discard(1, "K1"),
        take(2), open_(2, "K1 K2 K3 | " + OPEN_HI, pen=[P(1, 10, SDO)]), discard(2, "Y2"),
    ],
    end=in_progress(),
)

# Seed 001 / yudum (run_wraps_12_13_1, playable_discard: called): "With run_wraps_12_13_1, a run
# ending in 13 also takes a 1", so seat 1's K1 is playable and charged only when seat 2 calls it
# (and cannot be taken). An okey discard is charged at once as discard_okey, never as
# discard_playable, so seat 3's call on it is accepted and charges nobody. (Seat 0's Y1 also fits
# Y9-Y13 by the wrap; nobody calls it.)
sc(
    "228_yudum_okey_discard_is_charged_at_once_and_a_wrapped_1_only_when_called",
    "d01_yudum_okey_discard_is_charged_at_once_and_a_wrapped_1_only_when_called",
    "yudum: K11-K12-K13 on the table; seat 1's K1 (fits by the wrap) is charged only when seat 2 calls it; seat 2's okey discard is charged at once",
    rules={"preset": "yudum"},
    racks=[HI + " K11 K12 K13 Y1", "K1", "R10", ""],
    steps=[
        open_(0, OPEN_HI + " | K11 K12 K13"), discard(0, "Y1"),
        draw(1), discard(1, "K1"),
        call(2, pen=[P(1, 101, DP)]), take(2, ok=False), draw(2),
        discard(2, "R10", pen=[P(2, 101, DO)]),
        call(3), draw(3),
    ],
    end=in_progress(),
)

# RULES.md: with the wrap a run may end ...-12-13-1 and "13-1-2 never"; at most 2 tiles per end and
# an okey goes where it is worth most. K11-K13 + [K1, okey]: K1 after 13, the okey below as K10
# (both above 13 is impossible). K2 then has no place; K9 goes below the okey.
sc(
    "229_yudum_wrapped_run_takes_okey_and_1_split_over_both_ends",
    "f01_yudum_wrapped_run_takes_okey_and_1_split_over_both_ends",
    "yudum: K11-K12-K13 + [K1, okey]: K1 goes after 13 (wrapped, worth 1), the okey below (K10); then K9 fits, K2 never (13-1-2)",
    rules={"preset": "yudum"},
    racks=[HI + " K11 K12 K13 K1 R10 K9 K2 Y1", "", "", ""],
    steps=[
        open_(0, OPEN_HI + " | K11 K12 K13"),
        add(0, 2, "K1 R10"),
        add(0, 2, "K2", ok=False),
        add(0, 2, "K9"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# RULES.md: "12-13-1 ends there": K12 K13 K1 (12 + 13 + 1 = 26; 26 + 110 opens) takes nothing above
# its 1, so an added okey goes below as K11; K11 is then refused, K10 fits.
sc(
    "230_yudum_okey_added_to_12_13_1_goes_below",
    "f02_yudum_okey_added_to_12_13_1_goes_below",
    "yudum: K12 K13 K1 (26) opens with Y9-Y13 and B9-B13; an okey added to a run ending in a wrapped 1 can only go below (K11), so K11 is refused and K10 fits",
    rules={"preset": "yudum"},
    racks=[HI + " K12 K13 K1 R10 K10 K11 Y1", "", "", ""],
    steps=[
        open_(0, OPEN_HI + " | K12 K13 K1"),
        add(0, 2, "R10"),
        add(0, 2, "K11", ok=False),
        add(0, 2, "K10"),
        discard(0, "Y1"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# One pair finish and one okey finish, each in a later turn, under the five presets
# ---------------------------------------------------------------------------------------------
# Pair finish (231-235): seat 0 opens 5 pairs and lays 5 more in its first turn (under solo the lay
# waits for the next turn), goes out in a later turn by adding K6 to seat 1's K3-K5 and discarding
# the drawn Y10: p = 1, d = 0, o = 0. Seat 1 opens K3-K5 + K9-K13 + R11-R13 (103) keeping an okey;
# seat 2 never opens; seat 3 opens 5 pairs keeping F (counts 10).


def pair_finish_later(file, seed, name, preset, scores):
    sc(
        file, seed, name,
        rules={"preset": preset},
        racks=["Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 Y7 Y7 Y8 Y8 B1 B1 B2 B2 Y9 K6",
               "K3 K4 K5 K9 K10 K11 K12 K13 R11 R12 R13 R10 Y13",
               "Y12",
               "B6 B6 B7 B7 B8 B8 B9 B9 B10 B10 F Y11"],
        pile="B11 B12 B13 Y10 K1",
        pile_len=5,
        steps=[
            open_(0, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"),
            lay(0, "Y6 Y6 | Y7 Y7 | Y8 Y8 | B1 B1 | B2 B2"),
            discard(0, "Y9"),
            draw(1), open_(1, "K3 K4 K5 | K9 K10 K11 K12 K13 | R11 R12 R13"), discard(1, "Y13"),
            draw(2), discard(2, "Y12"),
            draw(3), open_(3, "B6 B6 | B7 B7 | B8 B8 | B9 B9 | B10 B10"), discard(3, "Y11"),
            draw(0), add(0, 10, "K6"), discard(0, "Y10"),
        ],
        end=finished(0, scores),
    )


# RULES.md: m = 2 (p): -202; meld opener 2 x rack + 101 per okey; never opened 404; pair opener
# 2 x 2 x rack.
# seat 1: R1 R5 R7 R12 B3 B5 B11 B11 K1 + okey: 1+5+7+12+3+5+11+11+1 = 56 -> 56 x 2 + 101 = 213
# seat 3: R2 R3 R3 R6 R7 R8 B13 K3 K8 K9 F: 2+3+3+6+7+8+13+3+8+9+10 = 72 -> 2 x 72 x 2 = 288
pair_finish_later(
    "231_classic_pair_opener_finishes_later_m2",
    "a1_classic_pair_opener_finishes_later_m2",
    "classic: a pair opener goes out in a later turn (m = 2): -202; meld opener 56x2 + 101 held okey; never opened 404; pair opener 2x72x2 (F counts 10)",
    "classic", [-202, 213, 404, 288],
)

# Seed 004 rows 20-23: "404 instead of 202" for the never-opened after a pairs finish is RULES.md's
# 202 x m; on opened racks the seed is silent about the multiplier, and RULES.md multiplies them too:
# m = 2 (p) for every seat, + 101 per okey outside it.
# seat 1: R7 R11 R13 B4 B11 B11 B12 B13 K13 + okey: 7+11+13+4+11+11+12+13+13 = 95 -> 95 x 2 + 101 = 291
# seat 3: R3 R8 Y12 B13 K2 K4 K7 K7 K10 K12 F: 3+8+12+13+2+4+7+7+10+12+10 = 88 -> 2 x 88 x 2 = 352
pair_finish_later(
    "232_penalties_pair_opener_finishes_later_m2",
    "a2_penalties_pair_opener_finishes_later",
    "penalties preset (seed 004): a pair opener goes out in a later turn (m = 2): -202; 95x2 + 101 held okey; never opened 404; pair opener 2x88x2 (F counts 10)",
    "penalties", [-202, 291, 404, 352],
)

# Seed 002 (practice) rows 10-11: "pair openers' penalties are doubled" is the factor 2 on a pair
# opener's rack; the seed is silent on a pair opener's finish, so RULES.md's p applies: m = 2;
# held okey + 101 outside it.
# seat 1: R2 R5 R5 R9 B11 B11 K6 K7 K8 + okey: 2+5+5+9+11+11+6+7+8 = 64 -> 64 x 2 + 101 = 229
# seat 3: R1 R4 R8 Y10 B4 B5 B13 K2 K2 K13 F: 1+4+8+10+4+5+13+2+2+13+10 = 72 -> 2 x 72 x 2 = 288
pair_finish_later(
    "233_practice_pair_opener_finishes_later_m2",
    "a3_practice_pair_opener_finishes_later_not_multiplied",
    "practice (seed 002): a pair opener goes out in a later turn (m = 2, RULES.md's p): -202; 64x2 + 101 held okey; never opened 404; pair opener 2x72x2",
    "practice", [-202, 229, 404, 288],
)

# Seed 003 (solo) rows 25, 28-33: "You can't add more on the turn you open" - seat 0's lay in its
# opening turn is rejected and waits for its second turn (it then discards the drawn K1, which fits
# no meld); the finish comes in its third turn by adding K6 to seat 1's K3-K5 (meld 5, after seat
# 0's first 5 pairs). The seed's table names no pairs multiplier: silent, so RULES.md's p applies,
# m = 2; its held okey "as the okey's number" contradicts RULES.md, which stands: 101 on top.
# seat 1: R1 R6 R8 R12 B3 B3 B5 B11 K7 + okey: 1+6+8+12+3+3+5+11+7 = 56 -> 56 x 2 + 101 = 213
# seat 3: R1 R13 B11 B13 K1 K2 K5 K11 K12 K13 F: 1+13+11+13+1+2+5+11+12+13+10 = 92 -> 2 x 92 x 2 = 368
sc(
    "234_solo_pair_opener_finishes_later_m2_held_okey_costs_101",
    "a4_solo_pair_opener_finishes_later_held_okey_counts_10",
    "solo (seed 003): a pair opener goes out in a later turn (m = 2): -202; 56x2 + 101 held okey (not its number); never opened 404; pair opener 2x92x2 (F counts 10)",
    rules={"preset": "solo"},
    racks=["Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 Y7 Y7 Y8 Y8 B1 B1 B2 B2 Y9 K6",
           "K3 K4 K5 K9 K10 K11 K12 K13 R11 R12 R13 R10 Y13",
           "Y12",
           "B6 B6 B7 B7 B8 B8 B9 B9 B10 B10 F Y11"],
    pile="B11 B12 B13 K1 R2 R3 R4 Y10 R5",
    pile_len=9,
    steps=[
        open_(0, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"),
        lay(0, "Y6 Y6 | Y7 Y7 | Y8 Y8 | B1 B1 | B2 B2", ok=False),
        discard(0, "Y9"),
        draw(1), open_(1, "K3 K4 K5 | K9 K10 K11 K12 K13 | R11 R12 R13"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "B6 B6 | B7 B7 | B8 B8 | B9 B9 | B10 B10"), discard(3, "Y11"),
        draw(0), lay(0, "Y6 Y6 | Y7 Y7 | Y8 Y8 | B1 B1 | B2 B2"), discard(0, "K1"),
        draw(1), discard(1, "R2"), draw(2), discard(2, "R3"), draw(3), discard(3, "R4"),
        draw(0), add(0, 5, "K6"), discard(0, "Y10"),
    ],
    end=finished(0, [-202, 213, 404, 368]),
)

# Seed 001 (yudum): all three multipliers, m = 2 (p); the yudum table is standard (seed 001's
# "Variant: standard or raising"), so seat 3's 5 pairs after seat 0's 5 are enough; a pair opener's
# add of 1 tile is within its 2.
# seat 1: R1 R4 R4 R6 Y10 Y12 B11 B13 K3 + okey: 1+4+4+6+10+12+11+13+3 = 64 -> 64 x 2 + 101 = 229
# seat 3: R5 R6 R7 Y11 Y13 B5 B13 K5 K8 K8 F: 5+6+7+11+13+5+13+5+8+8+10 = 91 -> 2 x 91 x 2 = 364
pair_finish_later(
    "235_yudum_pair_opener_finishes_later_m2",
    "a5_yudum_pair_opener_finishes_later_m2",
    "yudum (seed 001): pairs finish m = 2; at its standard table 5 pairs open after 5: -202; 64x2+101; 404; 2x91x2",
    "yudum", [-202, 229, 404, 364],
)

# Okey finish (236-240): seat 0 opens K9-K13 + Y9-Y13 (110) and, except under solo, lays B9-B13 and
# B1-B4 in the same turn; in a later turn it adds the drawn K7 with K8 below K9-K13 and discards an
# okey as its last tile: o = 1, d = 0, p = 0. Seat 1 opens K9-K13 + R11-R13 + Y8 B8 R8 (115) keeping
# an okey; seat 2 never opens; seat 3 opens 5 pairs with F F.


def okey_finish_later(file, seed, name, preset, scores, **options):
    sc(
        file, seed, name,
        rules={"preset": preset, **options},
        racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 B1 B2 B3 B4 R10 Y1 K8",
               "K9 K10 K11 K12 K13 R11 R12 R13 Y8 B8 R8 R10 Y2",
               "Y3",
               "B6 B6 B7 B7 Y6 Y6 Y7 Y7 F F Y4"],
        pile="Y5 B5 K5 K7 K1",
        pile_len=5,
        steps=[
            open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
            lay(0, "B9 B10 B11 B12 B13 | B1 B2 B3 B4"),
            discard(0, "Y1"),
            draw(1), open_(1, "K9 K10 K11 K12 K13 | R11 R12 R13 | Y8 B8 R8"), discard(1, "Y2"),
            draw(2), discard(2, "Y3"),
            draw(3), open_(3, "B6 B6 | B7 B7 | Y6 Y6 | Y7 Y7 | F F"), discard(3, "Y4"),
            draw(0), add(0, 0, "K7 K8"), discard(0, "R10"),
        ],
        end=finished(0, scores),
    )


# RULES.md: m = 2 (o): -202; meld opener 2 x rack + 101 per okey; never opened 404; pair opener
# 2 x 2 x rack.
# seat 1: R2 R4 R4 R5 Y5 Y13 K3 K4 K6 + okey: 2+4+4+5+5+13+3+4+6 = 46 -> 46 x 2 + 101 = 193
# seat 3: R7 R7 Y5 Y8 Y10 B3 B9 K1 K5 K7 K8: 7+7+5+8+10+3+9+1+5+7+8 = 70 -> 2 x 70 x 2 = 280
okey_finish_later(
    "236_classic_okey_finish_later_m2",
    "b1_classic_okey_finish_later_m2",
    "classic: going out with an okey after an earlier opening (m = 2): -202; meld opener 46x2 + 101 held okey; never opened 404; pair opener 2x70x2",
    "classic", [-202, 193, 404, 280],
)

# Seed 004 row 23: the never-opened's "404 instead of 202" after an okey finish is RULES.md's
# 202 x 2; RULES.md multiplies opened racks by m too (the seed is silent on it): m = 2 for every
# seat, + 101 per okey outside it; the finisher -101 x 2.
# seat 1: R1 R1 R6 Y5 Y8 Y9 Y12 B8 K1 + okey: 1+1+6+5+8+9+12+8+1 = 51 -> 51 x 2 + 101 = 203
# seat 3: R3 R4 B1 B3 B12 B13 K4 K5 K5 K6 K8: 3+4+1+3+12+13+4+5+5+6+8 = 64 -> 2 x 64 x 2 = 256
okey_finish_later(
    "237_penalties_okey_finish_later_m2",
    "b2_penalties_okey_finish_later",
    "penalties preset: going out with an okey after an earlier opening (m = 2): -202; 51x2 + 101 held okey; never opened 404; pair opener 2x64x2",
    "penalties", [-202, 203, 404, 256],
)

# Seed 002 (practice) row 10: "finishing with an okey doubles those penalties" (and the -101):
# m = 2; the held okey stays a 101 surcharge.
# seat 1: R1 R3 R8 Y1 Y5 Y11 Y13 B2 K1 + okey: 1+3+8+1+5+11+13+2+1 = 45 -> 45 x 2 + 101 = 191
# seat 3: R2 R5 R13 Y2 Y10 B5 B9 K3 K5 K5 K7: 2+5+13+2+10+5+9+3+5+5+7 = 66 -> 2 x 66 x 2 = 264
okey_finish_later(
    "238_practice_okey_finish_later_doubles",
    "b3_practice_okey_finish_later_doubles",
    "practice: finishing with an okey doubles: -202; 45x2 + 101; 404; pair opener 2x66x2",
    "practice", [-202, 191, 404, 264],
)

# Seed 003 (solo) rows 25, 29, 33: seat 0 lays B9-B13 and B1-B4 in its second turn (not in its
# opening turn) and discards the drawn K1 (no wrap: it fits no meld); in its third turn it adds K7 K8
# and goes out with the okey: "Went out with an okey as the last tile: -202", m = 2 for everyone;
# the held okey is 101 on top, never doubled (RULES.md stands over the seed's okey number).
# seat 1: R1 R1 R12 Y5 Y8 B3 B8 B13 K2 + okey: 1+1+12+5+8+3+8+13+2 = 53 -> 53 x 2 + 101 = 207
# seat 3: R2 R6 R6 Y10 B1 B2 K3 K5 K6 K6 K8: 2+6+6+10+1+2+3+5+6+6+8 = 55 -> 2 x 55 x 2 = 220
sc(
    "239_solo_okey_finish_later_m2_held_okey_costs_101",
    "b4_solo_okey_finish_later_held_okey_counts_10_doubled",
    "solo (seed 003): went out with an okey as the last tile -202 (m = 2); the held okey costs 101 on top, never doubled (53x2 + 101); never opened 404; pair opener 2x55x2",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 B1 B2 B3 B4 R10 Y1 K8",
           "K9 K10 K11 K12 K13 R11 R12 R13 Y8 B8 R8 R10 Y2",
           "Y3",
           "B6 B6 B7 B7 Y6 Y6 Y7 Y7 F F Y4"],
    pile="Y5 B5 K5 K1 R2 R3 R4 K7 R5",
    pile_len=9,
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "Y1"),
        draw(1), open_(1, "K9 K10 K11 K12 K13 | R11 R12 R13 | Y8 B8 R8"), discard(1, "Y2"),
        draw(2), discard(2, "Y3"),
        draw(3), open_(3, "B6 B6 | B7 B7 | Y6 Y6 | Y7 Y7 | F F"), discard(3, "Y4"),
        draw(0), lay(0, "B9 B10 B11 B12 B13 | B1 B2 B3 B4"), discard(0, "K1"),
        draw(1), discard(1, "R2"), draw(2), discard(2, "R3"), draw(3), discard(3, "R4"),
        draw(0), add(0, 0, "K7 K8"), discard(0, "R10"),
    ],
    end=finished(0, [-202, 207, 404, 220]),
)

# Seed 001 (yudum) at a raising table (the variant the table picks): seat 0's 110 makes the bar 111
# and seat 1 opens 115 ("if someone opened 105 you need 106"); seat 3's 5 pairs are the first pair
# opening (bar 5); m = 2 (o). Seat 0's Y1 fits Y9-Y13 by the wrap but nobody calls it.
# seat 1: R3 R7 Y5 Y9 Y11 B10 K2 K4 K7 + okey: 3+7+5+9+11+10+2+4+7 = 58 -> 58 x 2 + 101 = 217
# seat 3: R1 R4 R13 Y10 Y13 B1 B2 B12 B13 K2 K5: 1+4+13+10+13+1+2+12+13+2+5 = 76 -> 2 x 76 x 2 = 304
okey_finish_later(
    "240_yudum_okey_finish_later_m2_after_raised_opening",
    "b5_yudum_okey_finish_later_m2_after_raised_opening",
    "yudum at a raising table: seat 1 opens 115 over the raised 111; okey finish m = 2: -202; 58x2 + 101; 404; pair opener 2x76x2",
    "yudum", [-202, 217, 404, 304], threshold="raising",
)
