"""Scenarios from a sixth audit of the rules against RULES.md and the seeds (183 on): each pins a
point no earlier scenario pinned (what an opening attempt is rejected for before it can be a wrong
opening, the seeds' worked thresholds, the side discard used or thrown back, calls after a refused
take or a timeout, partners at a pile-out and a retrieval, end-of-hand scores with penalties off,
okey readings, raising pair openings up to a cancellation). Registered by make_scenarios.py.
Expected results are worked out by hand from RULES.md and the seeds.

As in scenarios_e.py, each scenario's filler tiles are drawn with the seed the audit's generator
used (the audit's own file name, `b01_...`, `d01_...`), so the racks are exactly the audited ones;
205 re-plays 078's deal under the `penalties` preset and draws its fillers with 078's file name.
Indicator R9 (okeys R10, F plays as R10) unless a scenario says otherwise.
"""

from okeygen import (SCENARIOS, P, add, call, cancelled, discard, draw, finished, in_progress, lay, open_,
                     pile_empty, ret, retrieve, scenario, take, timeout)
from scenarios_b import DP, OR, SDO, WO


def sc(file, seed, name, **kw):
    """Registers `file` with the racks the audit drew for `seed`."""
    scenario(seed, name, **kw)
    SCENARIOS[-1]["file"] = file


# ---------------------------------------------------------------------------------------------
# Opening: what is rejected comes before what is a wrong opening; the seeds' worked thresholds
# ---------------------------------------------------------------------------------------------

# RULES.md "Opening / Outcomes": invalid meld, mixed kinds, a new meld over 5 tiles -> rejected (no
# penalty) even when the total is also below the threshold; only valid melds below it cost 101.
sc(
    "183_invalid_mixed_or_long_melds_below_the_threshold_are_rejected_not_wrong_openings",
    "b01_invalid_mixed_or_long_melds_below_the_threshold_are_rejected_not_wrong_openings",
    "below the threshold but with an invalid meld, mixed kinds, a 6-tile run or a non-pair: rejected, no 101; valid melds below it: wrong opening",
    racks=["K9 K10 K11 K12 K13 B1 B2 B4 B3 Y5 Y5 Y6 Y6 K7 K7 K8 K8", "", "", ""],
    avoid="B1 B2 B3 B4",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B1 B2 B4", ok=False),
        open_(0, "K9 K10 K11 K12 K13 | Y5 Y5", ok=False),
        open_(0, "K8 K9 K10 K11 K12 K13", ok=False),
        open_(0, "Y5 Y5 | Y6 Y6 | K7 K7 | K8 K8 | B3 B2", ok=False),
        open_(0, "K9 K10 K11 K12 K13 | B1 B2 B3", pen=[P(0, 101, WO)]),
        discard(0, "B4"),
        draw(1),
    ],
    end=in_progress(),
)

# RULES.md: "a rack left empty ... -> rejected (nothing changes, no penalty)". 22 tiles in valid melds
# worth 49 in all: the empty rack rejects it; the same melds less one are a wrong opening.
sc(
    "184_melds_that_would_empty_the_rack_are_rejected_even_below_the_threshold",
    "b02_melds_that_would_empty_the_rack_are_rejected_even_below_the_threshold",
    "all 22 tiles in valid melds worth 49: rejected for the empty rack, no 101; five of the six melds: wrong opening",
    racks=["R1 R2 R3 R4 Y1 Y2 Y3 Y4 B1 B2 B3 B4 K1 K2 K3 K4 R1 Y1 B1 R2 Y2 B2", "", "", ""],
    steps=[
        open_(0, "R1 R2 R3 R4 | Y1 Y2 Y3 Y4 | B1 B2 B3 B4 | K1 K2 K3 K4 | R1 Y1 B1 | R2 Y2 B2", ok=False),
        open_(0, "R1 R2 R3 R4 | Y1 Y2 Y3 Y4 | B1 B2 B3 B4 | K1 K2 K3 K4 | R1 Y1 B1", pen=[P(0, 101, WO)]),
        discard(0, "R2"),
        draw(1),
    ],
    end=in_progress(),
)

# RULES.md: "a side discard taken this turn left out of the opening -> rejected" (also when the
# melds are below the threshold); with it, below the threshold -> wrong opening, it goes back,
# the player must draw before discarding.
sc(
    "185_below_threshold_opening_leaving_out_the_side_discard_is_rejected_not_wrong",
    "b03_below_threshold_opening_leaving_out_the_side_discard_is_rejected_not_wrong",
    "side discard taken, 55 of melds without it: rejected, no 101; 82 with it: wrong opening, it goes back, draw then discard",
    racks=["K8", "K9 K10 B9 B10 B11 B12 B13 Y1", "", ""],
    avoid="K8 K11 K7",
    steps=[
        discard(0, "K8"),
        take(1),
        open_(1, "B9 B10 B11 B12 B13", ok=False),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13", pen=[P(1, 101, WO)]),
        discard(1, "Y1", ok=False),
        draw(1),
        discard(1, "Y1"),
        draw(2),
    ],
    end=in_progress(),
)

# RULES.md: wrong opening with pairs and the side discard: 101 to the opener, the tile goes back;
# no 20x charge (only an accepted opening charges the discarder).
sc(
    "186_four_pairs_with_the_side_discard_are_a_wrong_opening_and_charge_no_20x",
    "b04_four_pairs_with_the_side_discard_are_a_wrong_opening_and_charge_no_20x",
    "side discard K7 in a 4-pair opening: wrong opening 101 to the opener, nothing to the discarder, it goes back and the player draws",
    racks=["K7", "K7 Y2 Y2 B3 B3 K4 K4 Y1", "", ""],
    steps=[
        discard(0, "K7"),
        take(1),
        open_(1, "K7 K7 | Y2 Y2 | B3 B3 | K4 K4", pen=[P(1, 101, WO)]),
        take(1, ok=False),
        draw(1),
        discard(1, "Y1"),
        draw(2),
    ],
    end=in_progress(),
)

# Seed 000: "the 7-8-9 run is worth 7 + 8 + 9 = 24; the 3-3-3 color set is worth 3 + 3 + 3 = 9",
# "7-8-9-10 ... 34 points". 24 + 9 + 34 + 34 = 101 opens; 21 + 9 + 34 + 34 = 98 does not.
# Indicator K1: the okey is K2 (not used).
sc(
    "187_seed000_examples_7_8_9_and_3_3_3_and_7_8_9_10_make_exactly_101",
    "b05_seed000_examples_7_8_9_and_3_3_3_and_7_8_9_10_make_exactly_101",
    "seed 000's examples: 7-8-9 (24) + 3-3-3 (9) + two 7-8-9-10 (34 each) = 101 opens; with 6-7-8 (21) instead, 98 is a wrong opening",
    ind="K1",
    racks=["Y7 Y8 Y9 R3 Y3 B3 B7 B8 B9 B10 K7 K8 K9 K10 R1",
           "Y6 Y7 Y8 R3 Y3 B3 B7 B8 B9 B10 K7 K8 K9 K10 R12", "", ""],
    avoid="K3 R1 R12",
    steps=[
        open_(0, "Y7 Y8 Y9 | R3 Y3 B3 | B7 B8 B9 B10 | K7 K8 K9 K10"),
        discard(0, "R1"),
        draw(1),
        open_(1, "Y6 Y7 Y8 | R3 Y3 B3 | B7 B8 B9 B10 | K7 K8 K9 K10", pen=[P(1, 101, WO)]),
        discard(1, "R12"),
        draw(2),
    ],
    end=in_progress(),
)

# Seed 000: "an opening of 108 makes the next meld threshold at least 109." Indicator K1 (okey K2).
sc(
    "188_seed000_raising_an_opening_of_108_makes_the_next_threshold_109",
    "b06_seed000_raising_an_opening_of_108_makes_the_next_threshold_109",
    "raising: 108 opens; another 108 is a wrong opening; 109 opens",
    ind="K1",
    rules={"threshold": "raising"},
    racks=["K8 K9 K10 K11 K12 Y10 Y11 Y12 Y13 B3 B4 B5 R1",
           "R8 R9 R10 R11 R12 B10 B11 B12 B13 Y3 Y4 Y5 R2",
           "R9 R10 R11 R12 R13 B11 Y11 K11 Y6 Y7 Y8 R4", ""],
    avoid="R1 R2 R4",
    steps=[
        open_(0, "K8 K9 K10 K11 K12 | Y10 Y11 Y12 Y13 | B3 B4 B5"),
        discard(0, "R1"),
        draw(1),
        open_(1, "R8 R9 R10 R11 R12 | B10 B11 B12 B13 | Y3 Y4 Y5", pen=[P(1, 101, WO)]),
        discard(1, "R2"),
        draw(2),
        open_(2, "R9 R10 R11 R12 R13 | B11 Y11 K11 | Y6 Y7 Y8"),
        discard(2, "R4"),
        draw(3),
    ],
    end=in_progress(),
)

# Seed 001's raising variant: "At a raising table each opener must beat the previous opening by at
# least one (if someone opened 105 you need 106)". The yudum preset is standard ("Variant: standard
# or raising" is the table creator's choice), so the table picks raising.
sc(
    "189_seed001_yudum_raising_after_an_opening_of_105_you_need_106",
    "b07_seed001_yudum_after_an_opening_of_105_you_need_106",
    "yudum at a raising table: 105 opens; 105 again is a wrong opening; 106 opens",
    ind="K1",
    rules={"preset": "yudum", "threshold": "raising"},
    racks=["K9 K10 K11 K12 K13 R8 R9 R10 R11 R12 Y1",
           "K9 K10 K11 K12 K13 R8 R9 R10 R11 R12 Y2",
           "B9 B10 B11 B12 B13 Y11 Y12 Y13 Y4 Y5 Y6 R3", ""],
    avoid="Y1 Y2 R3", pile_len=10,
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | R8 R9 R10 R11 R12"),
        discard(0, "Y1"),
        draw(1),
        open_(1, "K9 K10 K11 K12 K13 | R8 R9 R10 R11 R12", pen=[P(1, 101, WO)]),
        discard(1, "Y2"),
        draw(2),
        open_(2, "B9 B10 B11 B12 B13 | Y11 Y12 Y13 | Y4 Y5 Y6"),
        discard(2, "R3"),
        draw(3),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# The side discard, the called mode, the wrap option
# ---------------------------------------------------------------------------------------------

# RULES.md: "Discarding while an unused side discard is held is rejected" - the taken tile itself
# too (seed 001: "you cannot take it and throw it back").
sc(
    "190_the_taken_side_discard_cannot_itself_be_discarded",
    "b08_the_taken_side_discard_cannot_itself_be_discarded",
    "the side discard taken cannot be thrown straight back: rejected; return it, draw, discard",
    racks=["K8", "Y3", "", ""],
    avoid="K8 K7 K9 K10 K6",
    steps=[
        discard(0, "K8"),
        take(1),
        discard(1, "K8", ok=False),
        ret(1),
        draw(1),
        discard(1, "Y3"),
        draw(2),
    ],
    end=in_progress(),
)

# RULES.md: an opened player must use the side discard "in a table action that turn": adding it to
# a meld laid earlier in the same turn counts; until then discarding is rejected.
sc(
    "191_opened_player_adds_the_side_discard_to_a_meld_laid_that_turn",
    "b09_opened_player_adds_the_side_discard_to_a_meld_laid_that_turn",
    "an opened player takes B6, lays B3 B4 B5 (discard still refused), adds B6 to it, then discards",
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 B6",
           "B9 B10 B11 B12 B13 R11 R12 R13 Y5 Y6 Y7 R4 B3 B4 B5 K1",
           "B4", "R3"],
    avoid="B7 B8",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "R1"),
        draw(1),
        open_(1, "B9 B10 B11 B12 B13 | R11 R12 R13 | Y5 Y6 Y7"),
        discard(1, "R4"),
        draw(2), discard(2, "B4"),
        draw(3), discard(3, "R3"),
        draw(0), discard(0, "B6"),
        take(1),
        lay(1, "B3 B4 B5"),
        discard(1, "K1", ok=False),
        add(1, 5, "B6"),
        discard(1, "K1"),
        draw(2),
    ],
    end=in_progress(),
)

# RULES.md (called): a call is accepted before taking a tile; a rejected take takes nothing, so the
# call still stands after it. The playable discard cannot be taken in called mode either.
sc(
    "192_called_mode_a_refused_take_is_no_take_the_call_still_counts",
    "b10_called_mode_a_refused_take_is_no_take_the_call_still_counts",
    "called mode: K8 fits K9-K13; taking it is refused, the next player then calls it: 101 to the discarder",
    rules={"playable_discard": "called"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 K8", "Y3", "", ""],
    avoid="K8 Y8 K7",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "K8"),
        take(1, ok=False),
        call(1, pen=[P(0, 101, DP)]),
        draw(1),
        discard(1, "Y3"),
        draw(2),
    ],
    end=in_progress(),
)

# RULES.md: with run_wraps_12_13_1 "13-1-2 never": a 13 never goes below a run's 1, so it is not
# playable there either.
sc(
    "193_wrap_option_a_13_never_goes_below_a_1",
    "b11_wrap_option_a_13_never_goes_below_a_1",
    "with 12-13-1 allowed, K13 cannot be added below K1-K2-K3; discarding it costs nothing and the next player may take it",
    rules={"run_wraps_12_13_1": True},
    racks=["K1 K2 K3 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 K13", "Y3", "", ""],
    avoid="K4 K12 K13 Y8 B8",
    steps=[
        open_(0, "K1 K2 K3 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        add(0, 0, "K13", ok=False),
        discard(0, "K13"),
        take(1),
        ret(1),
        draw(1),
        discard(1, "Y3"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Partners, end-of-hand scores, in-play penalties off
# ---------------------------------------------------------------------------------------------

# RULES.md: the partner's 0 is only for "finisher's partner"; after a pile-out everyone is scored
# on their own rack (no winner).
sc(
    "194_partners_pile_out_nobody_is_cleared",
    "b12_partners_pile_out_nobody_is_cleared",
    "partners, the pile runs out: every seat scores its own rack or 202, nobody's score is cleared",
    rules={"partners": True},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3 B3 B4",
           "",
           "B9 B10 B11 B12 B13 R11 R12 R13 K5 K6 K7 R4 Y4 K4 R5 Y5 B5 R6 Y6 B6 Y7",
           ""],
    pile="R7 K3 B7",
    pile_len=3,
    avoid="K8 Y8 B8 R8 K3 R7 B7 K3",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "B4"),
        draw(1), discard(1, "R7"),
        draw(2),
        open_(2, "B9 B10 B11 B12 B13 | R11 R12 R13 | K5 K6 K7"),
        discard(2, "K3"),
        draw(3), discard(3, "B7"),
    ],
    # seat 0: R1 Y1 B1 K1 R2 Y2 B2 K2 R3 Y3 B3 = 4 + 8 + 9 = 21
    # seat 2: R4 Y4 K4 R5 Y5 B5 R6 Y6 B6 Y7 = 12 + 15 + 18 + 7 = 52
    end=pile_empty([21, 202, 52, 202]),
)

# RULES.md: "If the okey was placed by another player, that player gets 101" - a partner too.
sc(
    "195_partners_retrieving_your_partners_okey_still_charges_the_partner",
    "b13_partners_retrieving_your_partners_okey_still_charges_the_partner",
    "partners: seat 2 retrieves the okey its partner seat 0 placed: 101 to seat 0",
    rules={"partners": True},
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1",
           "Y4",
           "B9 B10 B11 B12 B13 Y9 Y10 Y11 Y12 Y13 K13 R2", ""],
    avoid="K10 K13 Y8 B8 R2 R1",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "R1"),
        draw(1), discard(1, "Y4"),
        draw(2),
        open_(2, "B9 B10 B11 B12 B13 | Y9 Y10 Y11 Y12 Y13"),
        retrieve(2, 0, "K13", pen=[P(0, 101, OR)]),
        discard(2, "R2"),
        draw(3),
    ],
    end=in_progress(),
)

# RULES.md scoring: a pair opener scores 2 x (rack sum, okeys excluded) x m + 101 per okey held; a
# false joker counts the okey's number (inside the multiplied sum). Seat 0 opened in turn 1 and
# goes out in a later turn with the other okey: m = 2 (o only).
sc(
    "196_okey_finish_pair_opener_holding_an_okey_and_a_false_joker",
    "b14_okey_finish_pair_opener_holding_an_okey_and_a_false_joker",
    "finish with the okey (m=2): a pair opener holding an okey and a false joker scores 2 x 67 x 2 + 101 = 369; never-opened 404",
    racks=["K9 K10 K11 K12 K13 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 R10 Y5 Y6 Y7 K1 R2 R3",
           "K6 K6 K7 K7 B7 B7 B8 B8 Y8 Y8 R10 Y1 Y2 K2 K3 K4 B9 R11 R12 R13 F",
           "", ""],
    pile="Y3 R7 R8 R4",
    avoid="K8 B6 Y4 Y8 R1 R5 R6 R9",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "K1"),
        draw(1),
        open_(1, "K6 K6 | K7 K7 | B7 B7 | B8 B8 | Y8 Y8"),
        discard(1, "Y3"),
        draw(2), discard(2, "R7"),
        draw(3), discard(3, "R8"),
        draw(0),
        lay(0, "Y5 Y6 Y7 | R2 R3 R4"),
        discard(0, "R10"),
    ],
    # seat 1 keeps R10 Y1 Y2 K2 K3 K4 B9 R11 R12 R13 F: 1+2+2+3+4+9+11+12+13+10 = 67
    end=finished(0, [-202, 2 * 67 * 2 + 101, 404, 404]),
)

# RULES.md / seed 004: "End-of-Round Penalties always apply" - with in-play penalties off a direct
# okey finish still scores m = 4.
sc(
    "197_penalties_off_end_of_hand_scores_still_apply",
    "b15_penalties_off_end_of_hand_scores_still_apply",
    "in-play penalties off: the first player lays 21 tiles and goes out with the okey: m = 4, no in-play penalty",
    rules={"in_play_penalties": False},
    racks=["K1 K2 K3 K4 K5 B1 B2 B3 B4 B5 Y9 Y10 Y11 Y12 Y13 B11 B12 B13 K13 R13 B13 R10", "", "", ""],
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | B1 B2 B3 B4 B5 | Y9 Y10 Y11 Y12 Y13 | B11 B12 B13 | K13 R13 B13"),
        discard(0, "R10"),
    ],
    end=finished(0, [-404, 808, 808, 808]),
)

# ---------------------------------------------------------------------------------------------
# Seed 003's examples under `solo`, a pair opener's retrieval, okey readings, penalties off
# ---------------------------------------------------------------------------------------------

# Seed 003 (solo): "yellow 10-11-12-13 (46) plus a group of three 13s (39) is 85, still short; add
# red 5-6-7 (18) and you have 103 and can open."
sc(
    "198_seed003_solo_85_is_short_103_opens",
    "b17_seed003_solo_85_is_short_103_opens",
    "solo preset: Y10-Y13 + three 13s (85) is a wrong opening; with R5-R6-R7 (103) it opens",
    rules={"preset": "solo"},
    racks=["Y10 Y11 Y12 Y13 K13 B13 R13 B2",
           "Y10 Y11 Y12 Y13 K13 B13 R13 R5 R6 R7 B1", "", ""],
    avoid="Y9 R4 R8 B1 B2",
    steps=[
        open_(0, "Y10 Y11 Y12 Y13 | K13 B13 R13", pen=[P(0, 101, WO)]),
        discard(0, "B2"),
        draw(1),
        open_(1, "Y10 Y11 Y12 Y13 | K13 B13 R13 | R5 R6 R7"),
        discard(1, "B1"),
        draw(2),
    ],
    end=in_progress(),
)

# Seed 003: "If a three-tile set could count either way, for example a tile and two okeys, it scores
# as whichever is worth more." K13 + two okeys: 13-13-13 (39), not 11-12-13 (36): 39 + 46 + 16 = 101.
sc(
    "199_seed003_solo_a_tile_and_two_okeys_score_the_reading_worth_more",
    "b18_seed003_solo_a_tile_and_two_okeys_score_the_reading_worth_more",
    "solo preset: K13 with both okeys reads as three 13s (39), so with Y10-Y13 (46) and four 4s (16) it opens at 101",
    rules={"preset": "solo"},
    racks=["K13 R10 R10 Y10 Y11 Y12 Y13 R4 Y4 B4 K4 B2", "", "", ""],
    steps=[
        open_(0, "K13 R10 R10 | Y10 Y11 Y12 Y13 | R4 Y4 B4 K4"),
        discard(0, "B2"),
        draw(1),
    ],
    end=in_progress(),
)

# RULES.md: after opening, anyone may retrieve; a pair opener too (only laying is limited to pairs).
sc(
    "200_pair_opener_retrieves_an_okey_from_a_run",
    "b19_pair_opener_retrieves_an_okey_from_a_run",
    "a pair opener supplies K13 for the okey in K11 K12 okey: the okey comes to its rack, 101 to the placer",
    racks=["K11 K12 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1",
           "R2 R2 Y3 Y3 B4 B4 K5 K5 B6 B6 K13 Y1", "", ""],
    avoid="K10 K13 Y8 B8 R1",
    steps=[
        open_(0, "K11 K12 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"),
        discard(0, "R1"),
        draw(1),
        open_(1, "R2 R2 | Y3 Y3 | B4 B4 | K5 K5 | B6 B6"),
        retrieve(1, 0, "K13", pen=[P(0, 101, OR)]),
        discard(1, "Y1"),
        draw(2),
    ],
    end=in_progress(),
)

# RULES.md with in-play penalties off: a wrong opening "is simply rejected" - with pairs too.
sc(
    "201_penalties_off_four_pairs_are_simply_rejected_then_five_open",
    "b20_penalties_off_four_pairs_are_simply_rejected_then_five_open",
    "in-play penalties off: 4 pairs rejected with nothing charged; the player may then open with 5 pairs",
    rules={"in_play_penalties": False},
    racks=["R1 R1 Y2 Y2 B3 B3 K4 K4 R5 R5 B7", "", "", ""],
    steps=[
        open_(0, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4", ok=False),
        open_(0, "R1 R1 | Y2 Y2 | B3 B3 | K4 K4 | R5 R5"),
        discard(0, "B7"),
        draw(1),
    ],
    end=in_progress(),
)

# RULES.md: "When an okey's reading is not forced by its neighbours, it takes the reading worth most":
# K5 between two okeys is 5-6-7 (18), not 3-4-5, 4-5-6 or three 5s: 18 + 55 + 28 = 101.
sc(
    "202_one_tile_and_two_okeys_read_as_the_highest_run_window",
    "b21_one_tile_and_two_okeys_read_as_the_highest_run_window",
    "K5 with both okeys reads 5-6-7 (18): with Y9-Y13 (55) and four 7s (28) it opens at exactly 101",
    racks=["R10 K5 R10 Y9 Y10 Y11 Y12 Y13 R7 Y7 B7 K7 B2", "", "", ""],
    steps=[
        open_(0, "R10 K5 R10 | Y9 Y10 Y11 Y12 Y13 | R7 Y7 B7 K7"),
        discard(0, "B2"),
        draw(1),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# The timeout in called mode, a pile-out after a wrong opening, presets, cancellation
# ---------------------------------------------------------------------------------------------

# RULES.md: the timeout plays the normal commands, "normal penalties apply": at a `called` table the
# playable tile it discards is charged only when the next player calls it.
sc(
    "203_called_mode_a_timeout_discard_that_fits_is_charged_only_when_called",
    "d01_called_mode_a_timeout_discard_that_fits_is_charged_only_when_called",
    "called mode: the timeout draws and discards K8 (the highest), which fits K9-K13: nothing at once, 101 when the next player calls",
    rules={"playable_discard": "called"},
    racks=["K9 K10 K11 K12 K13 Y9 Y10 Y11 Y12 Y13 R1",
           "R2 R3 R4 R5 R6 R7 Y1 Y2 Y3 Y4 Y5 Y6 Y7 B1 B2 B3 B4 B5 B6 B7 K8",
           "B12", ""],
    pile="K1",
    avoid="K8",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | Y9 Y10 Y11 Y12 Y13"),
        discard(0, "R1"),
        timeout(1),
        take(2, ok=False),
        call(2, pen=[P(1, 101, DP)]),
        draw(2),
        discard(2, "B12"),
    ],
    end=in_progress(),
)

# RULES.md: the hand ends "after any discard that leaves the centre pile empty"; a wrong opening
# leaves the seat never opened (202).
sc(
    "204_pile_out_after_a_wrong_opening_the_seat_scores_202",
    "d02_pile_out_after_a_wrong_opening_the_seat_scores_202",
    "seat 1 draws the last tile, opens 82 (wrong opening, 101), discards: pile empty, everyone 202",
    racks=["B2", "K8 K9 K10 B9 B10 B11 B12 B13 Y1", "", ""],
    pile="R1",
    pile_len=1,
    avoid="B1 B8 K7 K11",
    steps=[
        discard(0, "B2"),
        draw(1),
        open_(1, "K8 K9 K10 | B9 B10 B11 B12 B13", pen=[P(1, 101, WO)]),
        discard(1, "Y1"),
    ],
    end=pile_empty([202, 202, 202, 202]),
)

# RULES.md / seed 004 ("If they use it to open with doubles, you get the tile's face value x 20"): the
# penalties preset charges the side discard in a pair opening as classic does. Same deal as 078 (its
# fillers are drawn with 078's file name).
sc(
    "205_penalties_preset_side_discard_in_a_pair_opening_costs_20_times",
    "078_side_discard_in_a_pair_opening_costs_20_times",
    "penalties preset (seed 004): the side discard K7 in a pair opening costs its discarder 140",
    rules={"preset": "penalties"},
    racks=["K7", "K7 Y2 Y2 B3 B3 K4 K4 B5 B5 R1", "", ""],
    steps=[
        discard(0, "K7"), take(1),
        open_(1, "K7 K7 | Y2 Y2 | B3 B3 | K4 K4 | B5 B5", pen=[P(0, 140, SDO)]),
        discard(1, "R1"),
    ],
    end=in_progress(),
)

# RULES.md: raising pair thresholds 5, 6, 7, 8; the fourth accepted pair opening cancels the hand.
sc(
    "206_raising_pair_openings_of_5_6_7_8_the_fourth_cancels",
    "d05_raising_pair_openings_of_5_6_7_8_the_fourth_cancels",
    "raising: seats open 5, 6, 7 then 8 pairs, each the risen minimum; the fourth accepted pair opening cancels the hand",
    rules={"threshold": "raising"},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K13",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 Y6 Y6 K12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 B6 B6 B7 B7 K11",
           "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K6 K6 K7 K7 K8 K8"],
    avoid="K11 K12 K13",
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"),
        discard(0, "K13"),
        draw(1),
        open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5 | Y6 Y6"),
        discard(1, "K12"),
        draw(2),
        open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5 | B6 B6 | B7 B7"),
        discard(2, "K11"),
        draw(3),
        open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5 | K6 K6 | K7 K7 | K8 K8"),
        discard(3, "K9", ok=False),
        draw(0, ok=False),
    ],
    end={**cancelled(), "scores": [0, 0, 0, 0]},
)
