"""Scenarios from an audit of the presets against their seed documents (144 on): each pins a
seed statement, at that seed's preset, that no earlier scenario pinned. Registered by
make_scenarios.py. Expected results are worked out by hand from RULES.md and the seeds."""

from okeygen import P, add, discard, draw, finished, in_progress, lay, open_, ret, retrieve, scenario, take
from scenarios_b import (B9_13, B10_13, DO, DP, K9_13, OR, PAIRS10, PAIRS10_TILES, SDO,
                         SEAT1_DIRECT_FINISH, SEAT1_MELDER, WO, Y9_13)

# ---------------------------------------------------------------------------------------------
# One hand, four presets: a pair opener goes out on a later turn with the okey
# ---------------------------------------------------------------------------------------------

# Seat 0 opens ten pairs on turn 0 and goes out on turn 4, adding K8 and discarding the okey R10:
# o = 1, p = 1, d = 0, so m = 4 under every preset (RULES.md's m = 2^(d+o+p); where a seed names
# fewer factors it is silent on the others). Seat 1 (melds) keeps K1 K2 K3 B3 B4 B5 Y6 Y7 R6 R7 K5
# = 49: 49 x 4 = 196. Seat 2 never opens: 202 x 4 = 808. Seat 3 (five pairs) keeps K4 B2 K1 K2 K3
# B3 R6 R7 B4 B5 = 37 and the other okey R10, 101 on top and never multiplied: 2 x 37 x 4 + 101 =
# 397. The finisher: -101 x 4 = -404. Each scenario keeps its former file name as the filler seed.
OKEY_PAIR_FINISH = dict(
    racks=[f"{PAIRS10_TILES} R10 B2",
           SEAT1_MELDER,
           "Y12",
           "K6 K6 K7 K7 B6 B6 B7 B7 Y8 Y8 R10 K4 B2 K1 K2 K3 B3 R6 R7 B4 Y11"],
    pile="K5 R12 B5 K8",
    steps=[
        open_(0, PAIRS10), discard(0, "B2"),
        draw(1), open_(1, f"{K9_13} | {B9_13}"), discard(1, "Y13"),
        draw(2), discard(2, "Y12"),
        draw(3), open_(3, "K6 K6 | K7 K7 | B6 B6 | B7 B7 | Y8 Y8"), discard(3, "Y11"),
        draw(0), add(0, 10, "K8"), discard(0, "R10"),
    ],
)

# Seed 004: "Finisher finishes with doubles and discards the okey: each player who never opened
# gets 808" is RULES.md's 202 x 4; its "Players who opened: penalty equal to the total face value"
# is silent on the multiplier, which RULES.md applies to opened racks too.
scenario(
    "144_penalties_pair_finish_with_the_okey_multiplies_by_4",
    "penalties (seed 004): a pair opener goes out with the okey: m = 4: -404; opened 49 x 4 = 196; never opened 808; pair opener 2 x 37 x 4 + 101 held okey = 397",
    rules={"preset": "penalties"},
    end=finished(0, [-404, 196, 808, 397]),
    seed="144_penalties_pair_finish_with_the_okey_gives_the_never_opened_808",
    **OKEY_PAIR_FINISH,
)

# Seed 003 names only the okey finish ("Went out with an okey as the last tile: -202"): silent on
# p, so m = 4. It counts held okeys at the okey's number; RULES.md ("A held okey counts 101 instead
# of its number and is never multiplied") stands: seat 3 scores 2 x 37 x 4 + 101 = 397.
scenario(
    "145_solo_pair_finish_with_the_okey_multiplies_by_4_and_a_held_okey_costs_101",
    "solo (seed 003): a pair opener goes out with the okey: m = 4 (RULES.md): -404; 49 x 4 = 196; 808; pair opener 2 x 37 x 4 + 101 held okey (not its number) = 397",
    rules={"preset": "solo"},
    end=finished(0, [-404, 196, 808, 397]),
    seed="145_solo_okey_finish_doubles_opened_racks_and_the_held_okey_counts_10",
    **OKEY_PAIR_FINISH,
)

# Seed 002: "finishing with an okey doubles those penalties, and pair openers' penalties are
# doubled"; silent on a pair opener's finish, so RULES.md's p applies: m = 4.
scenario(
    "146_practice_pair_finish_with_the_okey_multiplies_by_4",
    "practice (seed 002): a pair opener goes out with the okey: o and p, m = 4: -404; 49 x 4 = 196; 808; pair opener 2 x 37 x 4 + 101 held okey = 397",
    rules={"preset": "practice"},
    end=finished(0, [-404, 196, 808, 397]),
    seed="146_practice_okey_finish_doubles_opened_racks_not_the_held_okey",
    **OKEY_PAIR_FINISH,
)

# Seed 001: "How you go out multiplies penalties", "An okey left in hand adds +101", "A player who
# opened with pairs has their penalty doubled": m = 4. The yudum table is standard (seed 001's
# "Variant: standard or raising", the first named), so seat 3 opens with five pairs after ten.
scenario(
    "147_yudum_pair_finish_with_the_okey_multiplies_by_4",
    "yudum (seed 001): a pair opener goes out with the okey: m = 4, a held okey stays 101; at its standard table five pairs still open after ten",
    rules={"preset": "yudum"},
    end=finished(0, [-404, 196, 808, 397]),
    **OKEY_PAIR_FINISH,
)

# ---------------------------------------------------------------------------------------------
# penalties (seed 004)
# ---------------------------------------------------------------------------------------------

# The hand of 119 with partners: seat 1 opens 127 and goes out at once (d = 1, m = 2). Seed 004's
# "Direct finish: every opponent gets 404" contradicts RULES.md for the opened seat 0, so RULES.md
# stands: seat 0 keeps its fillers B1 B4 B8 B8 B9 B10 B11 K5 K7 Y4 Y8 = 75, x 2 = 150; the
# never-opened seat 2 gets 202 x 2 = 404; "In Duo, the finisher's partner gets nothing that round"
# (RULES.md too): seat 3 scores 0. The finisher: -101 x 2.
scenario(
    "148_penalties_direct_finish_with_partners_the_partner_scores_0",
    "penalties with partners: a direct finish (m = 2): the opened opponent 75 x 2 = 150, the never-opened one 404, the finisher's partner 0",
    rules={"preset": "penalties", "partners": True},
    end=finished(1, [150, -202, 404, 0]),
    **SEAT1_DIRECT_FINISH,
)

# Seed 004's five in-play penalties, "on by default", in one hand of its preset:
# - seat 0 opens 156 and discards the okey R10: 101 discard_okey; seat 1 cannot take it;
# - seat 1 declares R1 R2 R3 + Y1 Y2 Y3 (12): 101 wrong_opening, and its only move is a discard;
#   it discards K8, which extends K9-13: 101 discard_playable ("whether they have opened their
#   hand or not"); seat 2 cannot take it;
# - seat 3 takes seat 2's B6 and opens 111 with it: 10 x 6 = 60 to seat 2, "not to the player
#   who opened";
# - seat 0 gives R7 for seat 3's okey in R5 R6 R10 (reads R7): 101 to seat 3; seat 0 then adds
#   that okey to K9-13 (it reads K8) and takes it back with K8: "Taking back an okey you laid
#   down yourself gets you nothing."
# Melds: 0 K9-13, 1 Y9-13, 2 B10-13 (seat 0); 3 B6-8, 4 R11-13, 5 K11-13, 6 R5 R6 R10 (seat 3).
scenario(
    "149_penalties_preset_charges_the_five_in_play_penalties",
    "penalties (seed 004): okey discard, wrong opening, playable discard by an unopened player, 10x side discard to its discarder, okey retrieved; one's own okey is free",
    rules={"preset": "penalties"},
    racks=[f"{K9_13} {Y9_13} {B10_13} R10 R7 K8 B2",
           "R1 R2 R3 Y1 Y2 Y3 K8",
           "B6",
           "B7 B8 R11 R12 R13 K11 K12 K13 R5 R6 R10 Y2"],
    steps=[
        open_(0, f"{K9_13} | {Y9_13} | {B10_13}"), discard(0, "R10", pen=[P(0, 101, DO)]),
        take(1, ok=False), draw(1),
        open_(1, "R1 R2 R3 | Y1 Y2 Y3", pen=[P(1, 101, WO)]),
        discard(1, "K8", pen=[P(1, 101, DP)]),
        take(2, ok=False), draw(2), discard(2, "B6"),
        take(3), open_(3, "B6 B7 B8 | R11 R12 R13 | K11 K12 K13 | R5 R6 R10", pen=[P(2, 60, SDO)]),
        discard(3, "Y2"),
        draw(0), retrieve(0, 6, "R7", pen=[P(3, 101, OR)]),
        add(0, 0, "R10"), retrieve(0, 0, "K8"),
        discard(0, "B2"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# solo (seed 003) and practice (seed 002): runs, the opening turn, the side discard
# ---------------------------------------------------------------------------------------------

# "1-2-3 is fine, but 12-13-1 is not": with B12 B13 B1 the opening is rejected (the other melds
# are 110, so nothing else is wrong); with B1 B2 B3 it opens 116. "You can't add more on the
# turn you open": K8 (it fits K9-13) and seat 1's Y8 (it fits Y9-13) are rejected in the opening
# turn. "From your next turn ... add single tiles to any run or group on the table, including
# other players' sets": seat 0 adds K8 to its run and K12 to seat 1's set of 12s; seat 1 adds Y8.
# Melds: 0 B1-3, 1 K9-13, 2 Y9-13 (seat 0); 3 R12 Y12 B12, 4 K5-9, 5 Y3-7, 6 B4-6 (seat 1).
scenario(
    "150_solo_no_wrap_and_adds_wait_for_the_next_turn",
    "solo (seed 003): 12-13-1 is no run; adds are rejected in the opening turn and accepted from the next, on anyone's run or set",
    rules={"preset": "solo"},
    racks=[f"B12 B13 B1 B2 B3 {K9_13} {Y9_13} K8 R2 K12 R4",
           "R12 Y12 B12 K5 K6 K7 K8 K9 Y3 Y4 Y5 Y6 Y7 B4 B5 B6 Y8 R1 R5",
           "R3",
           "R8"],
    steps=[
        open_(0, f"B12 B13 B1 | {K9_13} | {Y9_13}", ok=False),
        open_(0, f"B1 B2 B3 | {K9_13} | {Y9_13}"),
        add(0, 1, "K8", ok=False),
        discard(0, "R2"),
        draw(1), open_(1, "R12 Y12 B12 | K5 K6 K7 K8 K9 | Y3 Y4 Y5 Y6 Y7 | B4 B5 B6"),
        add(1, 2, "Y8", ok=False),
        discard(1, "R1"),
        draw(2), discard(2, "R3"),
        draw(3), discard(3, "R8"),
        draw(0), add(0, 1, "K8"), add(0, 3, "K12"), discard(0, "R4"),
        draw(1), add(1, 2, "Y8"), discard(1, "R5"),
    ],
    end=in_progress(),
)

# Seed 002: "runs do not wrap from 13 to 1" (B12 B13 B1 rejects the opening); "Discarding a tile
# that extends a table meld costs 101" (K8 onto K9-13, charged at the discard); "A discard you
# take must be used in that turn's melds; otherwise it goes back and you draw from the middle"
# (seat 2 takes R2, may not discard with it unused, gives it back free, may not take it again,
# draws).
scenario(
    "151_practice_no_wrap_playable_discard_charged_at_once_unused_discard_goes_back",
    "practice (seed 002): 12-13-1 is no run; a discard extending a table meld costs 101 at once; an unused side discard goes back and the player draws",
    rules={"preset": "practice"},
    racks=[f"B12 B13 B1 {K9_13} {Y9_13} K8", "R2", "Y3", ""],
    steps=[
        open_(0, f"B12 B13 B1 | {K9_13} | {Y9_13}", ok=False),
        open_(0, f"{K9_13} | {Y9_13}"),
        discard(0, "K8", pen=[P(0, 101, DP)]),
        take(1, ok=False), draw(1), discard(1, "R2"),
        take(2), discard(2, "Y3", ok=False), ret(2), take(2, ok=False), draw(2), discard(2, "Y3"),
        draw(3),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# yudum (seed 001): the pair opener's lay-off limit
# ---------------------------------------------------------------------------------------------

# "A player who opened with pairs may lay off at most 2 tiles per turn": the limit counts every
# add of the turn, not one action — K10 then K6 (one tile each) reach it, so Y8, which fits
# Y9-13, is rejected; laying a new pair is not laying off; the next turn starts again from 0
# (Y8 and K11 are accepted, K5, which fits K6-11, is not). Melds: 0 K7-9, 1 Y9-13, 2 B9-13
# (seat 0), 3-7 seat 1's pairs, 8 Y1 Y1.
scenario(
    "152_yudum_pair_opener_lay_off_limit_counts_every_add_of_the_turn",
    "yudum: a pair opener's two lay-offs a turn count across adds (a third is rejected), a new pair is not one, and the count restarts next turn",
    rules={"preset": "yudum"},
    racks=[f"K7 K8 K9 {Y9_13} {B9_13} R12 R1",
           "R2 R2 R3 R3 R4 R4 R5 R5 R6 R6 K10 K6 Y8 Y1 Y1 R13 K11 K5 R11",
           "B2",
           "K2"],
    steps=[
        open_(0, f"K7 K8 K9 | {Y9_13} | {B9_13}"), discard(0, "R12"),
        draw(1), open_(1, "R2 R2 | R3 R3 | R4 R4 | R5 R5 | R6 R6"),
        add(1, 0, "K10"), add(1, 0, "K6"),
        add(1, 1, "Y8", ok=False),
        lay(1, "Y1 Y1"),
        discard(1, "R13"),
        draw(2), discard(2, "B2"),
        draw(3), discard(3, "K2"),
        draw(0), discard(0, "R1"),
        draw(1), add(1, 1, "Y8"), add(1, 0, "K11"),
        add(1, 0, "K5", ok=False),
        discard(1, "R11"),
    ],
    end=in_progress(),
)

# ---------------------------------------------------------------------------------------------
# RULES.md: keep one tile, for adds too
# ---------------------------------------------------------------------------------------------

# "A player always keeps at least one rack tile for the closing discard: an action that would
# empty the rack is rejected." 034 shows it for an opening and a lay; here for an add. Seat 0
# opens 140 with 20 of its 22 tiles; adding B6 B7 (two tiles on one end, otherwise allowed) would
# empty the rack; B6 alone is accepted and B7, which fits B1-6, finishes free. Direct finish:
# m = 2.
scenario(
    "153_an_add_that_would_empty_the_rack_is_rejected",
    "an add of the last two rack tiles is rejected (keep one tile); adding one and discarding the other finishes, m = 2",
    racks=[f"K1 K2 K3 K4 K5 {K9_13} {Y9_13} B1 B2 B3 B4 B5 B6 B7", "", "", ""],
    steps=[
        open_(0, f"K1 K2 K3 K4 K5 | {K9_13} | {Y9_13} | B1 B2 B3 B4 B5"),
        add(0, 3, "B6 B7", ok=False),
        add(0, 3, "B6"),
        discard(0, "B7"),
        draw(1, ok=False),
    ],
    end=finished(0, [-202, 404, 404, 404]),
)
