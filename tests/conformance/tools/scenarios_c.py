"""Scenarios for the scoring and preset points of issue 16 (136 on), registered by
make_scenarios.py. Expected results are worked out by hand from RULES.md and the seeds."""

from okeygen import P, discard, draw, finished, open_, pile_empty, scenario

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
