//! Times as AWS writes them: SigV4's `YYYYMMDDTHHMMSSZ`, and the RFC 3339 times of
//! credentials' `Expiration` and of the SSO token cache.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `time` as SigV4 writes it: `YYYYMMDDTHHMMSSZ`, in UTC.
pub(crate) fn timestamp(time: SystemTime) -> String {
    let [year, month, day, hour, minute, second] = utc_fields(time);
    format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z")
}

/// `time` in RFC 3339, in UTC to the second: `2026-11-25T05:00:00Z`, as the AWS CLI writes
/// the times of its token cache.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let [year, month, day, hour, minute, second] = utc_fields(time);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// Year, month, day, hour, minute and second of `time` in UTC (the epoch for earlier times).
fn utc_fields(time: SystemTime) -> [u64; 6] {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_date(seconds / 86_400);
    let of_day = seconds % 86_400;
    [
        year,
        month,
        day,
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
    ]
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// An RFC 3339 time in UTC or with an offset (`2026-11-25T01:00:00Z`,
/// `2026-11-25T01:00:00.123+00:00`), as AWS writes `Expiration`.
pub(crate) fn parse_time(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = text.get(range)?;
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let shape = text.as_bytes();
    if shape.len() < 20 || shape[4] != b'-' || shape[7] != b'-' || shape[13] != b':' {
        return None;
    }
    if !matches!(shape[10], b'T' | b't' | b' ') || shape[16] != b':' {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        rest = &fraction[digits..];
    }
    let offset = match rest {
        // Older AWS CLI token caches write `UTC`.
        "Z" | "z" | "UTC" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (hours, minutes) = rest[1..].split_once(':')?;
            let two_digits = |t: &str| t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit());
            if !two_digits(hours) || !two_digits(minutes) {
                return None;
            }
            let hours: i64 = hours.parse().ok()?;
            let minutes: i64 = minutes.parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    let seconds = u64::try_from(seconds).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(seconds))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_in_sigv4s_form() {
        let at = |seconds| timestamp(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "19700101T000000Z");
        // 2000-02-29 (a leap day of a century leap year), 23:59:59.
        assert_eq!(at(951_868_799), "20000229T235959Z");
        assert_eq!(at(951_868_800), "20000301T000000Z");
        // 2026-11-24 20:26:52.
        assert_eq!(at(1_795_552_012), "20261124T202652Z");
        assert_eq!(at(4_102_444_799), "20991231T235959Z");
    }

    #[test]
    fn rfc3339_times_read_back_as_written() {
        let at = UNIX_EPOCH + Duration::from_secs(1_795_552_012);
        assert_eq!(rfc3339(at), "2026-11-24T20:26:52Z");
        assert_eq!(parse_time(&rfc3339(at)), Some(at));
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_868_799)),
            "2000-02-29T23:59:59Z"
        );
    }

    #[test]
    fn expirations_are_read_as_aws_writes_them() {
        let at = |seconds| Some(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), at(0));
        assert_eq!(parse_time("2026-11-24T20:26:52Z"), at(1_795_552_012));
        assert_eq!(parse_time("2026-11-24T20:26:52.250Z"), at(1_795_552_012));
        assert_eq!(parse_time("2026-11-24T21:26:52+01:00"), at(1_795_552_012));
        assert_eq!(parse_time("2024-02-29T00:00:00Z"), at(1_709_164_800));
        assert_eq!(parse_time("2024-02-29T00:00:00UTC"), at(1_709_164_800));
        for bad in [
            "",
            "2026-11-24",
            "2026-13-01T00:00:00Z",
            "2026-11-24T20:26:52",
            "soon",
            "2026-11-24T20:26:52+9999999999999999:00",
            "2026-11-24T20:26:52+-1:00",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }
}
