"""Scenarios from a ninth audit of the rules against RULES.md and the seeds (262 on): each pins a
point no earlier scenario pinned (who may call and when, returning the side discard, the side
discard across seat 3 → seat 0, a pair opening undone by a return, preset options overridden by a
table, four pair openings cancelling under `yudum`, direct finishes under `penalties`, `yudum` with
partners and after a wrong opening, the rack's last tile, raising after a wrong opening, two okeys
of one run placed by two players, okey readings with both okeys, a finish that also empties the
pile, timeouts out of turn and after the end, the okey around 12-13-1, and raising with partners).
Registered by make_scenarios.py. Expected results are worked out by hand from RULES.md and the
seeds.

As in scenarios_e.py to scenarios_i.py, each scenario's filler tiles are drawn with the seed the
audit's generator used (the audit's own file name, `300_...` to `323_...`), so the racks are
exactly the audited ones. Every scenario ends in progress, cancelled or with a direct finish; only
273's opened seat 0 scores filler tiles, listed in its comment. Indicator R9 (okeys R10, F plays as
R10) throughout.
"""

from okeygen import (SCENARIOS, P, add, call, cancelled, discard, draw, finished, in_progress, lay,
                     open_, ret, retrieve, scenario, take, timeout)
from scenarios_b import DP, OR, SDO, TR, WO


def sc(file, seed, name, **kw):
    """Registers `file` with its fillers drawn for `seed` (the audit's file name)."""
    scenario(seed, name, **kw)
    SCENARIOS[-1]["file"] = file


# ---------------------------------------------------------------------------------------------
# The called mode, the side discard: who may call, returning, seat 3 → seat 0, a rolled-back pair
# opening
# ---------------------------------------------------------------------------------------------

# RULES.md "Penalties during play": with `playable_discard: called` a playable discard is "charged
# only if the next player calls it before taking a tile; a call on a tile that does not fit is
# accepted and charges nobody"; docs/rules.md decision 7: "Only the seat on turn may call, only
# about the latest discard" (with no discard, `nothing_to_call`). Seat 0 opens K9-K13 (55) +
# B10-B13 (46) = 101 and discards K8, which fits below K9: no charge at the discard; seats 2, 3 and
# 0 may not call it, seat 1 (on turn) does: 101 to seat 0. Seat 1's R1 fits nothing: seat 2's call
# is accepted and charges nobody.
sc(
    "262_called_mode_only_the_next_player_may_call_and_only_after_a_discard",
    "300_called_mode_only_the_next_player_may_call_and_only_after_a_discard",
    "called mode: no call before any discard; only the next player (seat 1) may call seat 0's playable K8; a call on a tile that fits nothing is accepted and charges nobody",
    rules={"playable_discard": "called"},
    racks=["K8 K9 K10 K11 K12 K13 B10 B11 B12 B13", "R1", "", ""],
    avoid="R2 R3 K7 B9",
    steps=[
        call(0, ok=False),
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(0, "K8"),
        call(2, ok=False), call(3, ok=False), call(0, ok=False),
        call(1, pen=[P(0, 101, DP)]), draw(1), discard(1, "R1"),
        call(2), draw(2),
    ],
    end=in_progress(),
)


# RULES.md "The side discard": "It may be returned before any table change that turn; the player
# then takes from the centre pile" - so only a side discard taken this turn can be returned (not
# before a take, not after a draw), once; after the return the player must draw: taking the same
# discard again and discarding before the draw are rejected. "A turn": one take per turn - after
# seat 1's draw its take is rejected.
sc(
    "263_return_discard_needs_a_taken_side_discard_and_works_once",
    "301_return_discard_needs_a_taken_side_discard_and_works_once",
    "return_discard without a take or after a draw is rejected; after a free return the discard cannot be taken again nor returned twice, a draw is required",
    racks=["R1", "R2", "", ""],
    avoid="R3",
    steps=[
        discard(0, "R1"),
        ret(1, ok=False), draw(1), ret(1, ok=False), take(1, ok=False), discard(1, "R2"),
        take(2), ret(2), ret(2, ok=False), take(2, ok=False), discard(2, "R2", ok=False), draw(2),
    ],
    end=in_progress(),
)


# RULES.md "Tiles and deal": "The previous player of seat s is seat (s+3) mod 4" - seat 0's is
# seat 3, also when seat 1 plays first (its first turn has no take). Seat 0 takes seat 3's K8 into
# K8-K12 (50) + B10-B13 (46) + Y11-Y13 (36) = 132; "Used in an accepted opening, it costs its
# discarder 10 x its number (meld opening)": 80 to seat 3.
sc(
    "264_seat_0_takes_seat_3s_discard_when_seat_1_deals",
    "302_seat_0_takes_seat_3s_discard_when_seat_1_deals",
    "first = 1: seat 0's previous player is seat 3; seat 0 takes seat 3's K8 into an opening of 132 and seat 3 pays 10 x 8",
    first=1,
    racks=["K9 K10 K11 K12 B10 B11 B12 B13 Y11 Y12 Y13 R1", "Y1", "Y5", "K8"],
    avoid="K7 K13 B9 Y10",
    steps=[
        take(1, ok=False), discard(1, "Y1"), draw(2), discard(2, "Y5"), draw(3), discard(3, "K8"),
        take(0),
        open_(0, "K8 K9 K10 K11 K12 | B10 B11 B12 B13 | Y11 Y12 Y13", pen=[P(3, 80, SDO)]),
        discard(0, "R1"), draw(1),
    ],
    end=in_progress(),
)


# RULES.md "The side discard": a pair opening with it costs its discarder "20 x its number": 140
# to seat 0; "Returning after a table change undoes every table action of that turn and costs
# 101" (docs/rules.md decision 1: the 140 is voided, the seat is not opened); decision 2: after
# the draw the turn goes on, and a new opening of 5 other pairs without the side discard is
# accepted and charges nobody.
sc(
    "265_pair_opening_with_the_side_discard_undone_by_a_return_then_five_other_pairs_open",
    "303_pair_opening_with_the_side_discard_undone_by_a_return_then_five_other_pairs_open",
    "seat 1 opens 5 pairs with seat 0's K7 (140 to seat 0), returns it (rollback, 101), draws and opens 5 other pairs free",
    racks=["K7", "K7 Y2 Y2 Y4 Y4 B6 B6 B8 B8 K11 K11 Y13", "", ""],
    steps=[
        discard(0, "K7"), take(1),
        open_(1, "K7 K7 | Y2 Y2 | Y4 Y4 | B6 B6 | B8 B8", pen=[P(0, 140, SDO)]),
        ret(1, pen=[P(1, 101, TR)]), draw(1),
        open_(1, "Y2 Y2 | Y4 Y4 | B6 B6 | B8 B8 | K11 K11"), discard(1, "Y13"), draw(2),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# A preset's option overridden by the table
# ---------------------------------------------------------------------------------------------

# docs/rules.md "Rule sets": "a preset fills every field, then the table may override any option".
# `solo` sets `act_after_opening_same_turn: false`; overridden to true, RULES.md's default holds:
# "Opening and further actions in the same turn are allowed". Opening K9-K13 + B10-B13 = 101, then
# Y1 Y2 Y3 laid at once.
sc(
    "266_solo_with_act_after_opening_same_turn_on_lays_in_the_opening_turn",
    "304_solo_with_act_after_opening_same_turn_on_lays_in_the_opening_turn",
    "preset solo with the option act_after_opening_same_turn overridden to true: a lay right after the opening is accepted",
    rules={"preset": "solo", "act_after_opening_same_turn": True},
    racks=["K9 K10 K11 K12 K13 B10 B11 B12 B13 Y1 Y2 Y3 R5", "", "", ""],
    avoid="Y4 R4 R6",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), lay(0, "Y1 Y2 Y3"), discard(0, "R5"),
        draw(1),
    ],
    end=in_progress(),
)


# `yudum` is standard (seed 001: "Variant: standard or raising", the table's choice); the option
# given explicitly changes nothing, RULES.md: "101 points and 5 pairs all hand": seat 1's Y9-Y13
# (55) + B10-B13 (46) = 101 opens after seat 0's 101.
sc(
    "267_yudum_with_threshold_standard_does_not_raise",
    "305_yudum_with_threshold_standard_does_not_raise",
    "preset yudum with threshold standard given explicitly (the preset's default): after seat 0's 101 opening, seat 1 opens with exactly 101",
    rules={"preset": "yudum", "threshold": "standard"},
    racks=["K9 K10 K11 K12 K13 B10 B11 B12 B13 R1", "Y9 Y10 Y11 Y12 Y13 B10 B11 B12 B13 R2", "", ""],
    avoid="R3 K8 B9 Y8",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(0, "R1"), draw(1),
        open_(1, "Y9 Y10 Y11 Y12 Y13 | B10 B11 B12 B13"), discard(1, "R2"), draw(2),
    ],
    end=in_progress(),
)


# `yudum` sets `run_wraps_12_13_1: true`; overridden to false, RULES.md "Melds": "1 is only low
# (1-2-3 is a run, 12-13-1 is not)": K12 K13 K1 is no meld (rejected). K11-K13 (36) + Y9-Y13 (55) +
# B9-B13 (55) = 146 opens; "With `run_wraps_12_13_1`, a run ending in 13 also takes a 1" - without
# it K1 fits nothing: seat 1's call (`yudum` keeps `called`) charges nobody, and it may take K1
# ("only if it is not an okey and not playable") and return it free.
sc(
    "268_yudum_with_run_wraps_off_has_no_12_13_1",
    "306_yudum_with_run_wraps_off_has_no_12_13_1",
    "preset yudum with run_wraps_12_13_1 overridden to false: K12 K13 K1 is no run; K1 does not fit K11-K13 so a call on it charges nothing and it may be taken",
    rules={"preset": "yudum", "run_wraps_12_13_1": False},
    racks=["K11 K12 K13 K1 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13", "", "", ""],
    avoid="K2 K10 Y8 B8",
    steps=[
        open_(0, "K12 K13 K1 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13", ok=False),
        open_(0, "K11 K12 K13 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"), discard(0, "K1"),
        call(1), take(1), ret(1), draw(1),
    ],
    end=in_progress(),
)


# `penalties` leaves `in_play_penalties` on (seed 004 row 3: "on by default"); turned off
# (row 4: "none of them is written, although the next player still cannot take a discarded
# okey"): K8-K12 (50) + B8-B12 (50) = 100 is rejected ("with in-play penalties off it is simply
# rejected"), K8-K12 + B9-B13 (55) = 105 opens; the okey R10 discarded costs nothing and cannot be
# taken; seat 1's K13, which fits above K8-K12, costs nothing.
sc(
    "269_penalties_preset_with_in_play_penalties_off",
    "307_penalties_preset_with_in_play_penalties_off",
    "preset penalties with in_play_penalties overridden to false: 100 is rejected (no wrong_opening), the okey discard and a playable discard cost nothing, the okey still cannot be taken",
    rules={"preset": "penalties", "in_play_penalties": False},
    racks=["K8 K9 K10 K11 K12 B8 B9 B10 B11 B12 B13 R10", "K13", "", ""],
    steps=[
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12", ok=False),
        open_(0, "K8 K9 K10 K11 K12 | B9 B10 B11 B12 B13"), discard(0, "R10"),
        take(1, ok=False), draw(1), discard(1, "K13"), draw(2),
    ],
    end=in_progress(),
)


# `practice` keeps `playable_discard: auto`; overridden to `called`, RULES.md: "charged only if the
# next player calls it before taking a tile": K8 (fits below K9-K13) costs nothing at the discard
# and 101 at seat 1's call; still playable, it cannot be taken.
sc(
    "270_practice_with_playable_discard_called",
    "308_practice_with_playable_discard_called",
    "preset practice with playable_discard overridden to called: K8 costs nothing at the discard and 101 when seat 1 calls it",
    rules={"preset": "practice", "playable_discard": "called"},
    racks=["K8 K9 K10 K11 K12 K13 B10 B11 B12 B13", "", "", ""],
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(0, "K8"),
        call(1, pen=[P(0, 101, DP)]), take(1, ok=False), draw(1),
    ],
    end=in_progress(),
)


# RULES.md "The side discard": "A pair opener may take it only while option `pairs_take_discard`
# is on" (seed 001 row 44: it binds players who opened with pairs only). Under `yudum` with the
# option off, pair opener seat 0 may not take seat 3's K3 (it fits nothing) and draws; meld opener
# seat 1 takes seat 0's Y6 (fits nothing) and uses it in a new run Y5 Y6 Y7.
sc(
    "271_yudum_pairs_take_discard_off_binds_the_pair_opener_not_the_meld_opener",
    "309_yudum_pairs_take_discard_off_binds_the_pair_opener_not_the_meld_opener",
    "preset yudum with pairs_take_discard off: pair opener seat 0 must draw; meld opener seat 1 takes Y6 and lays Y5 Y6 Y7",
    rules={"preset": "yudum", "pairs_take_discard": False},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 Y12 Y6",
           "K9 K10 K11 K12 K13 B10 B11 B12 B13 Y1 Y5 Y7 Y2", "K2", "K3"],
    avoid="Y4 Y8 Y3 K8 B9",
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "Y12"),
        draw(1), open_(1, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(1, "Y1"),
        draw(2), discard(2, "K2"), draw(3), discard(3, "K3"),
        take(0, ok=False), draw(0), discard(0, "Y6"),
        take(1), lay(1, "Y5 Y6 Y7"), discard(1, "Y2"), draw(2),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Cancellation and direct finishes
# ---------------------------------------------------------------------------------------------

# Under `yudum` (standard: "101 points and 5 pairs all hand") each seat opens with exactly 5 pairs;
# RULES.md "Opening": "If all four players open with pairs, the hand is cancelled at once, when the
# fourth pair opening is accepted" - seat 3's discard after it is rejected. (At a raising table the
# pair bar would rise after each, as in 206.)
sc(
    "272_yudum_four_five_pair_openings_cancel_the_hand",
    "310_yudum_four_five_pair_openings_cancel_the_hand",
    "yudum (standard, its default): four openings of exactly 5 pairs are all accepted; the fourth cancels the hand at once",
    rules={"preset": "yudum"},
    racks=["R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K13", "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 K12",
           "B1 B1 B2 B2 B3 B3 B4 B4 B5 B5 K11", "K1 K1 K2 K2 K3 K3 K4 K4 K5 K5 K9"],
    steps=[
        open_(0, "R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"), discard(0, "K13"),
        draw(1), open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5"), discard(1, "K12"),
        draw(2), open_(2, "B1 B1 | B2 B2 | B3 B3 | B4 B4 | B5 B5"), discard(2, "K11"),
        draw(3), open_(3, "K1 K1 | K2 K2 | K3 K3 | K4 K4 | K5 K5"), discard(3, "K9", ok=False),
    ],
    end=cancelled(),
)


# Seed 004 row 25: "Direct finish: every opponent gets 404, or 808 if the final discard is the
# okey" contradicts RULES.md, which stands: m = 2^(d+o+p) for every seat. Seat 0 opens K9-K13 +
# B10-B13 = 101; seat 1 draws Y13, opens 10 pairs, adds K8 below K9 and discards Y13, its last
# tile: direct and pairs, no okey: m = 4, the finisher -404; seats 2 and 3 never opened: 202 x 4
# = 808; seat 0 (opened) keeps its fillers B2 B3 B5 B13 K6 K8 K13 R8 Y6 Y7 Y9 Y10 = 90: 90 x 4 = 360.
sc(
    "273_penalties_direct_pair_finish_multiplies_by_4",
    "311_penalties_direct_pair_finish_every_opponent_404",
    "penalties (seed 004): seat 1 opens 10 pairs, adds K8 and goes out in the same turn (direct and pairs, no okey): m = 4 (RULES.md): -404; the opened seat 0 90 x 4 = 360, not a flat 404; never opened 202 x 4 = 808",
    rules={"preset": "penalties"},
    racks=["K9 K10 K11 K12 K13 B10 B11 B12 B13 B1",
           "Y1 Y1 Y2 Y2 Y3 Y3 Y4 Y4 Y5 Y5 R1 R1 R2 R2 R3 R3 R4 R4 R5 R5 K8", "", ""],
    pile="Y13",
    avoid="B9 K7",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), discard(0, "B1"), draw(1),
        open_(1, "Y1 Y1 | Y2 Y2 | Y3 Y3 | Y4 Y4 | Y5 Y5 | R1 R1 | R2 R2 | R3 R3 | R4 R4 | R5 R5"),
        add(1, 0, "K8"), discard(1, "Y13"),
    ],
    end=finished(1, [360, -404, 808, 808]),
)


# RULES.md "Opening": a wrong opening leaves "the tiles ... in the rack", so the player has not
# opened; "d = 1 if the finisher had not opened before this turn (a direct finish)". Seat 0's
# K11-K13 (36) + Y6-Y8 (21) = 57 costs 101; next turn it opens K1-K5 (15) + K6-K10 (40) + K11-K13
# (36) + Y1-Y5 (15) + Y6-Y8 (21) = 127 with 21 tiles and discards Y13: m = 2, -202; the others never
# opened: 202 x 2 = 404.
sc(
    "274_a_wrong_opening_earlier_does_not_stop_a_direct_finish",
    "312_a_wrong_opening_earlier_does_not_stop_a_direct_finish",
    "seat 0's first-turn opening of 57 is wrong (101); next turn it opens 127 with all but one tile and goes out: it had not opened before, so m = 2",
    racks=["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13 Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8 B1", "R1", "R2", "R3"],
    pile="B5 B6 B7 Y13",
    avoid="Y9",
    steps=[
        open_(0, "K11 K12 K13 | Y6 Y7 Y8", pen=[P(0, 101, WO)]), discard(0, "B1"),
        draw(1), discard(1, "R1"), draw(2), discard(2, "R2"), draw(3), discard(3, "R3"),
        draw(0),
        open_(0, "K1 K2 K3 K4 K5 | K6 K7 K8 K9 K10 | K11 K12 K13 | Y1 Y2 Y3 Y4 Y5 | Y6 Y7 Y8"),
        discard(0, "Y13"),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)


# RULES.md "A turn": "A player always keeps at least one rack tile for the closing discard: an
# action that would empty the rack is rejected" - a lay too. Seat 0 opens K1-K5 + K6-K10 + B6-B10
# + B1-B4 = 105 and keeps Y1 Y2; a round later it draws Y3: laying Y1 Y2 Y3 would leave nothing to
# discard. Y3 fits no table meld, so its discard costs nothing.
sc(
    "275_a_lay_that_would_empty_the_rack_is_rejected",
    "313_a_lay_that_would_empty_the_rack_is_rejected",
    "an opened player holding Y1 Y2 draws Y3: laying Y1 Y2 Y3 would leave no tile to discard and is rejected",
    racks=["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 B6 B7 B8 B9 B10 B1 B2 B3 B4 Y1 Y2 Y13", "R1", "R2", "R3"],
    pile="R5 R6 R7 Y3",
    avoid="Y4 K11 B11 B5 Y12",
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | K6 K7 K8 K9 K10 | B6 B7 B8 B9 B10 | B1 B2 B3 B4"),
        discard(0, "Y13"),
        draw(1), discard(1, "R1"), draw(2), discard(2, "R2"), draw(3), discard(3, "R3"),
        draw(0), lay(0, "Y1 Y2 Y3", ok=False), discard(0, "Y3"), draw(1),
    ],
    end=in_progress(),
)


# RULES.md "Thresholds": "`raising`: an accepted meld opening of value v makes the meld threshold
# at least v+1" - a wrong opening is not accepted. Seat 0's K8-K12 + B8-B12 = 100 is wrong (101) and
# raises nothing: seat 1's Y9-Y13 + B10-B13 = 101 opens and lifts the bar to 102, so seat 2's
# K9-K13 + Y10-Y13 = 101 is wrong.
sc(
    "276_raising_a_wrong_opening_does_not_raise_the_bar",
    "314_raising_a_wrong_opening_does_not_raise_the_bar",
    "raising: seat 0's 100 is a wrong opening and raises nothing, so seat 1 opens 101; seat 2's 101 is then wrong (bar 102)",
    rules={"threshold": "raising"},
    racks=["K8 K9 K10 K11 K12 B8 B9 B10 B11 B12 R1", "Y9 Y10 Y11 Y12 Y13 B10 B11 B12 B13 R2",
           "K9 K10 K11 K12 K13 Y10 Y11 Y12 Y13 R3", ""],
    steps=[
        open_(0, "K8 K9 K10 K11 K12 | B8 B9 B10 B11 B12", pen=[P(0, 101, WO)]), discard(0, "R1"),
        draw(1), open_(1, "Y9 Y10 Y11 Y12 Y13 | B10 B11 B12 B13"), discard(1, "R2"),
        draw(2), open_(2, "K9 K10 K11 K12 K13 | Y10 Y11 Y12 Y13", pen=[P(2, 101, WO)]),
        discard(2, "R3"), draw(3),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Okeys of one run placed by two players; partners under yudum; the opening turn under solo
# ---------------------------------------------------------------------------------------------

# RULES.md "After opening": "in a run, the tile at its place" (several okeys in one action,
# docs/rules.md row 41 of seed 000); "If the okey was placed by another player, that player gets
# 101" (decision 18: the seat whose lay or add put it there). Seat 0 opens K3 K4 okey (reads K5,
# the reading worth most: 12) + Y9-Y13 + B9-B13 = 122; seat 1 opens 110 and adds its okey, which
# goes at K6 (worth more than K2, decision 12); seat 2 opens K9-K13 + R11-R13 + Y5-Y7 = 109 and
# gives K5 K6 for both: 101 to seat 0 and 101 to seat 1.
sc(
    "277_two_okeys_of_one_run_placed_by_two_players_retrieved_together_charge_both",
    "315_two_okeys_of_one_run_placed_by_two_players_retrieved_together_charge_both",
    "K3 K4 okey (seat 0) grows with seat 1's okey at K6; seat 2 gives K5 K6 for both: 101 to seat 0 and 101 to seat 1",
    racks=["K3 K4 R10 Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R1",
           "Y9 Y10 Y11 Y12 Y13 B9 B10 B11 B12 B13 R10 R2",
           "K5 K6 K9 K10 K11 K12 K13 R11 R12 R13 Y5 Y6 Y7 R3", ""],
    steps=[
        open_(0, "K3 K4 R10 | Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"), discard(0, "R1"),
        draw(1), open_(1, "Y9 Y10 Y11 Y12 Y13 | B9 B10 B11 B12 B13"), add(1, 0, "R10"),
        discard(1, "R2"),
        draw(2), open_(2, "K9 K10 K11 K12 K13 | R11 R12 R13 | Y5 Y6 Y7"),
        retrieve(2, 0, "K5 K6", pen=[P(0, 101, OR), P(1, 101, OR)]),
        discard(2, "R3"), draw(3),
    ],
    end=in_progress(),
)


# Seed 001 row 26: `yudum` keeps all three multipliers of RULES.md; row 37: "If one partner goes
# out, the other partner's penalty is cleared - even if they never opened". Seat 0 lays K1-K13 and
# Y1-Y8 (127, 21 tiles) on turn 0 and discards Y13: direct, m = 2: -202; partner seat 2 0; seats 1
# and 3 never opened: 202 x 2 = 404.
sc(
    "278_yudum_partners_direct_finish_the_partner_scores_0",
    "316_yudum_partners_direct_finish_the_partner_scores_0",
    "yudum + partners: seat 0 lays 21 tiles and goes out on turn 0 (direct, m = 2): -202; partner seat 2 scores 0; seats 1 and 3 never opened 404",
    rules={"preset": "yudum", "partners": True},
    racks=["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13 Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8 Y13", "", "", ""],
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | K6 K7 K8 K9 K10 | K11 K12 K13 | Y1 Y2 Y3 Y4 Y5 | Y6 Y7 Y8"),
        discard(0, "Y13"),
    ],
    end=finished(0, [-202, 404, 0, 404]),
)


# Seed 003 rows 25-26: "You can't add more on the turn you open." / "From your next turn, use Lay
# set for new sets" (`act_after_opening_same_turn: false`). Seat 0's lay right after opening 101 is
# rejected; in its next turn it takes seat 3's Y6 (it fits nothing) and lays Y5 Y6 Y7.
sc(
    "279_solo_option_off_binds_only_the_opening_turn",
    "317_solo_option_off_binds_only_the_opening_turn",
    "solo: a lay right after the opening is rejected; in a later turn the opened seat takes Y6 and lays Y5 Y6 Y7",
    rules={"preset": "solo"},
    racks=["K9 K10 K11 K12 K13 B10 B11 B12 B13 Y5 Y7 R1 Y13", "R2", "R3", "Y6"],
    avoid="Y4 Y8 K8 B9 Y12",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B10 B11 B12 B13"), lay(0, "Y5 Y6 Y7", ok=False),
        discard(0, "R1"),
        draw(1), discard(1, "R2"), draw(2), discard(2, "R3"), draw(3), discard(3, "Y6"),
        take(0), lay(0, "Y5 Y6 Y7"), discard(0, "Y13"), draw(1),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# Both okeys with a 13 and with a false joker
# ---------------------------------------------------------------------------------------------

# docs/rules.md decision 10: "K13 with two okeys reads as three 13s (39)"; RULES.md "In a set, an
# okey stands for any missing colour, so a real tile of any missing colour may be added while the
# set has fewer than 4 tiles", and "A tile is playable when some table meld could take it by an
# add". Seat 0 opens K13 okey okey (39) + Y9-Y13 (55) + K1-K4 (10) = 104; its Y13 (a missing
# colour) costs 101 and cannot be taken. Seat 1 opens B8-B12 + K8-K12 + Y5-Y7 = 118 and adds B13:
# four tiles, so R13 then fits nothing (free, and seat 2 may take it and return it).
sc(
    "280_three_tile_set_with_two_okeys_takes_any_missing_colour_until_full",
    "318_three_tile_set_with_two_okeys_takes_any_missing_colour_until_full",
    "K13 with both okeys is a 3-tile set of 13s: discarding Y13 (a missing colour) costs 101 and cannot be taken; B13 is added (4 tiles), after which R13 fits nothing",
    racks=["K13 R10 R10 Y9 Y10 Y11 Y12 Y13 Y13 K1 K2 K3 K4",
           "B8 B9 B10 B11 B12 B13 K8 K9 K10 K11 K12 Y5 Y6 Y7 R13", "", ""],
    avoid="Y8 K5 K7 B7 Y4 R12",
    steps=[
        open_(0, "K13 R10 R10 | Y9 Y10 Y11 Y12 Y13 | K1 K2 K3 K4"),
        discard(0, "Y13", pen=[P(0, 101, DP)]),
        take(1, ok=False), draw(1),
        open_(1, "B8 B9 B10 B11 B12 | K8 K9 K10 K11 K12 | Y5 Y6 Y7"),
        add(1, 0, "B13"), discard(1, "R13"), take(2), ret(2), draw(2),
    ],
    end=in_progress(),
)


# RULES.md "Tiles and deal": "A false joker is not wild: it is a plain tile with the okey's colour
# and number" (R10); "Melds": an okey "takes the reading worth most" - F okey okey reads R10-R11-R12
# (33), more than three 10s (30) or R8-R9-R10 (27): 33 + K11-K13 (36) + R8 Y8 B8 K8 (32) = 101
# opens exactly; R13 then fits above R12: 101 `discard_playable`.
sc(
    "281_false_joker_with_both_okeys_reads_as_the_run_worth_most",
    "319_false_joker_with_both_okeys_reads_as_the_run_worth_most",
    "okey R10, F plays R10: F R10 R10 reads R10-R11-R12 (33), worth more than a set of 10s (30): 33 + 36 + 32 opens at exactly 101; R13 then extends it (101)",
    racks=["F R10 R10 K11 K12 K13 R8 Y8 B8 K8 R13", "", "", ""],
    avoid="K10 R9 Y7 Y9",
    steps=[
        open_(0, "F R10 R10 | K11 K12 K13 | R8 Y8 B8 K8"),
        discard(0, "R13", pen=[P(0, 101, DP)]), draw(1),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# The end of the hand: a finish that empties the pile, steps after the end
# ---------------------------------------------------------------------------------------------

# RULES.md "End of the hand": "The hand ends when a player discards the last rack tile (finished),
# or after any discard that leaves the centre pile empty (pile empty)" - with a pile of 0 the
# first player's last-tile discard does both: it is a finish. Opening 127 with 21 tiles on turn 0:
# direct, m = 2: -202, the others never opened: 404.
sc(
    "282_empty_pile_first_player_goes_out_on_turn_0_is_a_finish",
    "320_empty_pile_first_player_goes_out_on_turn_0_is_a_finish",
    "pile of 0: the first player lays 21 tiles and discards its last tile: that discard both empties the rack and leaves the pile empty; it is a finish (direct, m = 2), not a pile-out",
    racks=["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13 Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8 Y13", "", "", ""],
    pile_len=0,
    steps=[
        open_(0, "K1 K2 K3 K4 K5 | K6 K7 K8 K9 K10 | K11 K12 K13 | Y1 Y2 Y3 Y4 Y5 | Y6 Y7 Y8"),
        discard(0, "Y13"),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)


# RULES.md "Turn timer": "On expiry the server plays for the seat" - the seat whose move it is; a
# timeout for seats 1 and 2 while seat 0 is on turn is rejected. After seat 0's direct finish (as
# in 282) the hand is over: a timeout and a draw are rejected.
sc(
    "283_only_the_seat_on_turn_can_time_out_and_nothing_after_the_end",
    "321_only_the_seat_on_turn_can_time_out_and_nothing_after_the_end",
    "a timeout for a seat that is not on turn is rejected; after a finish, any step (timeout, draw) is rejected",
    racks=["K1 K2 K3 K4 K5 K6 K7 K8 K9 K10 K11 K12 K13 Y1 Y2 Y3 Y4 Y5 Y6 Y7 Y8 Y13", "", "", ""],
    steps=[
        timeout(1, ok=False), timeout(2, ok=False),
        open_(0, "K1 K2 K3 K4 K5 | K6 K7 K8 K9 K10 | K11 K12 K13 | Y1 Y2 Y3 Y4 Y5 | Y6 Y7 Y8"),
        discard(0, "Y13"),
        timeout(1, ok=False), draw(1, ok=False),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)

# ---------------------------------------------------------------------------------------------
# yudum: the okey around 12-13-1, raising with partners
# ---------------------------------------------------------------------------------------------

# Seed 001 row 13: "12-13-1 is allowed and that 1 counts as 1 point. No other wrap-around (13-1-2
# is not valid)"; RULES.md: the option "lets a run end ...-12-13-1" - nothing goes after that 1.
# K13 okey K2 (the okey as K1), K11-K13 K1 K2 and K12 K13 K1 with the okey fixed as K2 are
# rejected; K12 K13 K1 okey: the okey can only go below, K11: 11 + 12 + 13 + 1 = 37; 37 + Y9-Y13
# (55) + Y3 B3 K3 (9) = 101 opens exactly. K2 fits nothing: seat 1's call charges nobody.
sc(
    "284_yudum_wrap_edges_the_okey_never_makes_13_1_2_and_goes_below_12_13_1",
    "322_yudum_wrap_edges_the_okey_never_makes_13_1_2_and_goes_below_12_13_1",
    "yudum (okey R10): K13 okey K2 and K11-K12-K13-K1-K2 are no runs, an okey read as K2 after K12 K13 K1 is rejected; K12 K13 K1 okey reads 11-12-13-1 (37): 37 + 55 + 9 opens at exactly 101; K2 then fits nothing (a call charges nobody)",
    rules={"preset": "yudum"},
    racks=["K13 R10 K2 K11 K12 K1 Y9 Y10 Y11 Y12 Y13 Y3 B3 K3", "", "", ""],
    avoid="K10 Y8 R3",
    steps=[
        open_(0, "K13 R10 K2 | Y9 Y10 Y11 Y12 Y13 | Y3 B3 K3", ok=False),
        open_(0, "K11 K12 K13 K1 K2 | Y9 Y10 Y11 Y12 Y13 | Y3 B3 K3", ok=False),
        open_(0, "K12 K13 K1 R10=K2 | Y9 Y10 Y11 Y12 Y13 | Y3 B3 K3", ok=False),
        open_(0, "K12 K13 K1 R10 | Y9 Y10 Y11 Y12 Y13 | Y3 B3 K3"),
        discard(0, "K2"), call(1), draw(1),
    ],
    end=in_progress(),
)


# RULES.md "Thresholds": "With `partners`, an opening raises only the opposing team's
# thresholds" (seed 000 row 31; a `yudum` table that picks raising). Seat 0 opens K9-K13 + B8-B12
# = 105: seats 1 and 3 need 106, seat 1's 105 is wrong (101); partner seat 2 still needs 101:
# Y9-Y13 (55) + R11-R13 (36) + Y1-Y4 (10) = 101 opens; seat 3 opens Y9-Y13 + R11-R13 + B1-B5 (15)
# = 106.
sc(
    "285_yudum_partners_raising_only_the_opponents_bar_rises",
    "323_yudum_partners_raising_only_the_opponents_bar_rises",
    "yudum + partners at a raising table: seat 0 opens 105, so seat 1 needs 106 (105 is wrong); partner seat 2 still opens with 101; seat 3 opens 106",
    rules={"preset": "yudum", "partners": True, "threshold": "raising"},
    racks=["K9 K10 K11 K12 K13 B8 B9 B10 B11 B12 K6", "K9 K10 K11 K12 K13 B8 B9 B10 B11 B12 K5",
           "Y9 Y10 Y11 Y12 Y13 R11 R12 R13 Y1 Y2 Y3 Y4 K4",
           "Y9 Y10 Y11 Y12 Y13 R11 R12 R13 B1 B2 B3 B4 B5 K3"],
    pile="R1 R2 R3 R4 R5 R6",
    steps=[
        open_(0, "K9 K10 K11 K12 K13 | B8 B9 B10 B11 B12"), discard(0, "K6"),
        draw(1), open_(1, "K9 K10 K11 K12 K13 | B8 B9 B10 B11 B12", pen=[P(1, 101, WO)]),
        discard(1, "K5"),
        draw(2), open_(2, "Y9 Y10 Y11 Y12 Y13 | R11 R12 R13 | Y1 Y2 Y3 Y4"), discard(2, "K4"),
        draw(3), open_(3, "Y9 Y10 Y11 Y12 Y13 | R11 R12 R13 | B1 B2 B3 B4 B5"), discard(3, "K3"),
        draw(0),
    ],
    end=in_progress(),
)
