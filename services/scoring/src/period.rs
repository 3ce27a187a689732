//! The UTC periods of standings and leaderboards: a day from 00:00, an ISO week from
//! Monday 00:00, a month from the 1st, and all time. Pure.

use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Utc};

/// The standings periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    AllTime,
    Day,
    Week,
    Month,
}

impl Period {
    /// The periods kept per period (all time is kept once).
    pub const PERIODIC: [Period; 3] = [Period::Day, Period::Week, Period::Month];

    /// The database's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Period::AllTime => "all",
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    /// The current period at `now`: [from, to).
    pub fn bounds(self, now: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
        let midnight = |d: chrono::NaiveDate| Utc.from_utc_datetime(&d.and_time(NaiveTime::MIN));
        let today = now.date_naive();
        match self {
            Period::AllTime => (
                DateTime::<Utc>::UNIX_EPOCH,
                Utc.with_ymd_and_hms(10_000, 1, 1, 0, 0, 0)
                    .single()
                    .expect("a valid time"),
            ),
            Period::Day => (midnight(today), midnight(today) + Duration::days(1)),
            Period::Week => {
                let monday =
                    today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
                (midnight(monday), midnight(monday) + Duration::days(7))
            }
            Period::Month => {
                let first = today.with_day(1).expect("day 1 exists");
                let next = if first.month() == 12 {
                    first
                        .with_year(first.year() + 1)
                        .and_then(|d| d.with_month(1))
                } else {
                    first.with_month(first.month() + 1)
                }
                .expect("the first of the next month exists");
                (midnight(first), midnight(next))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_utc_day_iso_week_and_month() {
        let now = Utc.with_ymd_and_hms(2026, 12, 31, 23, 59, 0).unwrap();
        let day = Period::Day.bounds(now);
        assert_eq!(day.0, Utc.with_ymd_and_hms(2026, 12, 31, 0, 0, 0).unwrap());
        assert_eq!(day.1, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
        let week = Period::Week.bounds(now);
        assert_eq!(
            week.0,
            Utc.with_ymd_and_hms(2026, 12, 28, 0, 0, 0).unwrap(),
            "a Monday"
        );
        assert_eq!(week.1, Utc.with_ymd_and_hms(2027, 1, 4, 0, 0, 0).unwrap());
        let month = Period::Month.bounds(now);
        assert_eq!(month.0, Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap());
        assert_eq!(month.1, Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap());
    }

    #[test]
    fn no_two_periods_share_a_window_even_where_they_start_together() {
        // 1 February 2027 is a Monday: a day, a week and a month start at that midnight, and
        // ListStandings' page tokens tell them apart by their windows.
        let start = Utc.with_ymd_and_hms(2027, 2, 1, 0, 0, 0).unwrap();
        let periods = [Period::AllTime, Period::Day, Period::Week, Period::Month];
        for a in periods {
            for b in periods {
                let (from, to) = a.bounds(start);
                assert_eq!(b.bounds(from) == (from, to), a == b, "{a:?} against {b:?}");
            }
        }
    }
}
