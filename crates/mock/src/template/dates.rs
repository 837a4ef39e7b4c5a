//! Dates for the `now` helper, as WireMock writes them: an offset such as `3 days` or
//! `now -2 hours`, and Java's `SimpleDateFormat` patterns (`yyyy-MM-dd'T'HH:mm:ss`) turned into
//! chrono's, or `epoch` (milliseconds) and `unix` (seconds). Without a format: ISO 8601 in
//! UTC, seconds only (`2024-05-01T10:00:00Z`), as WireMock's `ISO8601Utils` writes it.
use chrono::{DateTime, Duration, Months, Utc};

/// Shifts `date` by an offset in WireMock's words: `<amount> <unit>` or `now <amount> <unit>`
/// (`+5 years`, `-1 days`); units are seconds, minutes, hours, days, weeks, months, years.
pub fn shift(date: DateTime<Utc>, offset: &str) -> Result<DateTime<Utc>, String> {
    if offset.eq_ignore_ascii_case("now") {
        return Ok(date);
    }
    let parts: Vec<&str> = offset.split(' ').collect();
    let (amount, unit) = match parts.as_slice() {
        [amount, unit] | [_, amount, unit] => (*amount, *unit),
        _ => {
            return Err(format!(
                "offset '{offset}': write <amount> <unit>, e.g. '8 seconds' or 'now +5 years'"
            ))
        }
    };
    let amount: i64 = amount
        .trim_start_matches('+')
        .parse()
        .map_err(|_| format!("offset '{offset}': '{amount}' is not a whole number"))?;
    let unit = unit.to_ascii_lowercase();
    let months = |n: i64| {
        let shifted = if n >= 0 {
            date.checked_add_months(Months::new(n as u32))
        } else {
            date.checked_sub_months(Months::new(n.unsigned_abs() as u32))
        };
        shifted.ok_or_else(|| format!("offset '{offset}' leaves the calendar"))
    };
    let seconds = match unit.as_str() {
        "milliseconds" => return Ok(date + Duration::milliseconds(amount)),
        "seconds" => amount,
        "minutes" => amount * 60,
        "hours" => amount * 3600,
        "days" => amount * 86_400,
        "weeks" => amount * 7 * 86_400,
        "months" => return months(amount),
        "years" => return months(amount * 12),
        other => {
            return Err(format!(
                "offset '{offset}': unknown unit '{other}' (seconds, minutes, hours, days, weeks, months, years)"
            ))
        }
    };
    Ok(date + Duration::seconds(seconds))
}

/// The date written in `format` (Java's `SimpleDateFormat` letters, `epoch`, `unix`), or ISO
/// 8601 without one.
pub fn format(date: DateTime<Utc>, format: Option<&str>) -> Result<String, String> {
    match format {
        None => Ok(date.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
        Some("epoch") => Ok(date.timestamp_millis().to_string()),
        Some("unix") => Ok(date.timestamp().to_string()),
        Some(java) => {
            let pattern = chrono_pattern(java)?;
            Ok(date.format(&pattern).to_string())
        }
    }
}

/// Java's `SimpleDateFormat` pattern as a chrono `strftime` pattern. Letters chrono cannot
/// write the same way are refused with their name.
pub fn chrono_pattern(java: &str) -> Result<String, String> {
    let chars: Vec<char> = java.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // Quoted text; '' is a quote.
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        out.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                push_literal(&mut out, chars[i]);
                i += 1;
            }
            i += 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut out, c);
            i += 1;
            continue;
        }
        let mut run = 1;
        while chars.get(i + run) == Some(&c) {
            run += 1;
        }
        let spec = match (c, run) {
            ('y' | 'u', 2) => "%y",
            ('y' | 'u', _) => "%Y",
            ('M', 1) => "%-m",
            ('M', 2) => "%m",
            ('M', 3) => "%b",
            ('M', _) => "%B",
            ('d', 1) => "%-d",
            ('d', _) => "%d",
            ('D', _) => "%j",
            ('H', 1) => "%-H",
            ('H', _) => "%H",
            ('h', 1) => "%-I",
            ('h', _) => "%I",
            ('m', 1) => "%-M",
            ('m', _) => "%M",
            ('s', 1) => "%-S",
            ('s', _) => "%S",
            ('S', 3) => "%3f",
            ('S', 6) => "%6f",
            ('S', 9) => "%9f",
            ('a', _) => "%p",
            ('E', 1..=3) => "%a",
            ('E', _) => "%A",
            ('Z', _) => "%z",
            // Java writes an ISO offset of UTC, the only zone here, as 'Z'.
            ('X', _) => "Z",
            ('z', _) => "%Z",
            _ => {
                return Err(format!(
                    "the date format letter '{}' (x{run}) is not supported by chokepoint mock",
                    c
                ))
            }
        };
        out.push_str(spec);
        i += run;
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 1, 31, 9, 5, 7).unwrap() + Duration::milliseconds(42)
    }

    #[test]
    fn java_patterns_write_as_java_writes_them() {
        let table = [
            // (Java pattern, what SimpleDateFormat writes in UTC)
            ("yyyy-MM-dd", "2024-01-31"),
            ("yyyy-MM-dd'T'HH:mm:ss", "2024-01-31T09:05:07"),
            ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-31T09:05:07.042Z"),
            ("dd/MM/yy H:m:s", "31/01/24 9:5:7"),
            ("EEE, d MMM yyyy", "Wed, 31 Jan 2024"),
            ("'at' HH 'o''clock'", "at 09 o'clock"),
            ("yyyyMMddHHmmss", "20240131090507"),
        ];
        for (java, expected) in table {
            assert_eq!(format(at(), Some(java)).unwrap(), expected, "{java}");
        }
        assert_eq!(format(at(), None).unwrap(), "2024-01-31T09:05:07Z");
        assert_eq!(format(at(), Some("epoch")).unwrap(), "1706691907042");
        assert_eq!(format(at(), Some("unix")).unwrap(), "1706691907");
        assert!(format(at(), Some("yyyy G")).is_err());
    }

    #[test]
    fn offsets_shift_as_wiremock_shifts_them() {
        let table = [
            // (offset, the shifted date in ISO 8601)
            ("3 days", "2024-02-03T09:05:07Z"),
            ("-1 hours", "2024-01-31T08:05:07Z"),
            ("now +10 minutes", "2024-01-31T09:15:07Z"),
            ("1 months", "2024-02-29T09:05:07Z"),
            ("-2 years", "2022-01-31T09:05:07Z"),
            ("now", "2024-01-31T09:05:07Z"),
        ];
        for (offset, expected) in table {
            let shifted = shift(at(), offset).unwrap();
            assert_eq!(format(shifted, None).unwrap(), expected, "{offset}");
        }
        assert!(shift(at(), "soon").is_err());
        assert!(shift(at(), "3 fortnights").is_err());
    }
}
