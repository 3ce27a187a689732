-- A display name made only of characters that show nothing (zero-width spaces and joiners, a
-- soft hyphen, variation selectors, tags, the Hangul fillers, the blank Braille pattern, white
-- space) counts as empty since this version (okey_platform::fields::shows_nothing). Names stored
-- before were accepted as they were; each becomes the name the server picks for a guest that
-- gives none (`Guest-` and the first six hexadecimal digits of the player id), so every profile
-- shows a name and UpdateProfile with the profile as read is not refused. The characters are
-- those of `shows_nothing`: Rust's white space and `takes_no_room`. Changing it changes this
-- list's meaning, not names already mended.
UPDATE accounts
SET display_name = 'Guest-' || left(replace(player_id::text, '-', ''), 6),
    updated_at = now()
WHERE display_name ~ ('^['
    -- white space (Rust's char::is_whitespace)
    || '\u0009-\u000D\u0020\u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000'
    -- default-ignorable code points, and the blank Braille pattern
    || '\u00AD\u034F\u061C\u115F-\u1160\u17B4-\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E'
    || '\u2060-\u206F\u2800\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8'
    || '\U0001BCA0-\U0001BCA3\U0001D173-\U0001D17A\U000E0000-\U000E0FFF'
    || ']*$');
