//! A name pattern of the catalogue of known pools ([`crate::catalogue`]) and how it matches a
//! pool name as chokepoint observed it.
//!
//! A pattern is written on a whole thread or process name: `#` is a run of digits, `*` any run
//! of characters, every other character itself (`ForkJoinPool.commonPool-worker-#`). The name it
//! meets has lost part of that: the observer strips the counter a pool adds
//! (`chokepoint_observe::threads::pool_name`: `ForkJoinPool.commonPool-worker-3` →
//! `ForkJoinPool.commonPool-worker`), and Linux keeps only the first 15 bytes of a thread's name
//! (`ForkJoinPool.co`). [`Pattern::matches_pool`] accepts a pool name when some name the
//! pattern matches comes out as that pool:
//! - **whole**: the pool is a whole name the pattern matches, or one with a counter stripped
//!   (the pool, a separator, a digit);
//! - **cut**: the pool is 15 bytes or fewer and, once given back what the counter stripping
//!   took (separators, then digits) up to 15 bytes, it begins some name the pattern matches.
//!   The cut must fall on a literal character or a digit run of the pattern, not inside a `*`,
//!   and keep at least [`CUT_KEEPS_LITERALS`] of its literal characters: `http-nio-8080-P` (a
//!   Tomcat poller) begins no `http-nio-*-exec-#`, and a leading `*` alone matches no cut name.

/// Bytes of a thread's name that Linux keeps (`TASK_COMM_LEN` − 1).
pub const CUT_BYTES: usize = 15;
/// Literal characters of a pattern a cut name must keep to match it.
pub const CUT_KEEPS_LITERALS: usize = 6;
/// The separators after which a trailing number is a pool's counter (as `pool_name` strips).
const SEPARATORS: &[char] = &['-', '_', '#', ' ', '.', ':', '/'];

/// One piece of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// This character.
    Literal(char),
    /// One digit or more.
    Digits,
    /// Any characters, none or more.
    Any,
}

/// One character of the name being matched: one observed, or one the observer took away,
/// known only by its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Letter {
    Exact(char),
    SomeSeparator,
    SomeDigit,
}

/// A compiled name pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    tokens: Vec<Token>,
}

/// Literal characters a pattern needs, so that `*` or `#-#` alone is refused.
const FEWEST_LITERALS: usize = 3;

impl Pattern {
    /// Compiles `text`; an error says why it cannot be a pattern.
    pub fn new(text: &str) -> Result<Pattern, String> {
        let tokens: Vec<Token> = text
            .chars()
            .map(|c| match c {
                '#' => Token::Digits,
                '*' => Token::Any,
                c => Token::Literal(c),
            })
            .collect();
        let literals = tokens
            .iter()
            .filter(|t| matches!(t, Token::Literal(_)))
            .count();
        if literals < FEWEST_LITERALS {
            return Err(format!(
                "pattern {text:?} has fewer than {FEWEST_LITERALS} plain characters: it would match nearly any name"
            ));
        }
        Ok(Pattern {
            text: text.to_string(),
            tokens,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether a pool name (a thread or process name, maybe without its counter, maybe cut at
    /// 15 bytes) can come from a name this pattern matches.
    pub fn matches_pool(&self, pool: &str) -> bool {
        let pool = pool.trim();
        if pool.is_empty() {
            return false;
        }
        let seen: Vec<Letter> = pool.chars().map(Letter::Exact).collect();
        let with_counter = || {
            let mut name = seen.clone();
            name.extend([Letter::SomeSeparator, Letter::SomeDigit]);
            name
        };
        if self.whole(&seen) || self.whole(&with_counter()) {
            return true;
        }
        if pool.len() > CUT_BYTES {
            return false;
        }
        // What the counter stripping took from a 15-byte name: `separators` separators, then
        // digits, up to the cut.
        let taken = CUT_BYTES - pool.len();
        let separators = if taken == 0 { 0..=0 } else { 1..=taken };
        separators.into_iter().any(|count| {
            let mut name = seen.clone();
            name.extend(std::iter::repeat_n(Letter::SomeSeparator, count));
            name.extend(std::iter::repeat_n(Letter::SomeDigit, taken - count));
            self.begins(&name)
        })
    }

    /// Whether `text` matches a prefix of a frame (`com.zaxxer.hikari.pool.HikariPool.getConnection`
    /// matches `com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)`).
    pub fn matches_frame(&self, frame: &str) -> bool {
        let mut tokens = self.tokens.clone();
        tokens.push(Token::Any);
        let text: Vec<Letter> = frame.trim().chars().map(Letter::Exact).collect();
        walk(&tokens, &text, Walk::Whole, 0, false)
    }

    /// Whether a whole file path (`/opt/app/lib/httpclient5-5.2.1.jar`) matches this pattern;
    /// a pattern for paths begins with `*/` to meet the file wherever it is installed.
    pub fn matches_path(&self, path: &str) -> bool {
        let text: Vec<Letter> = path.trim().chars().map(Letter::Exact).collect();
        self.whole(&text)
    }

    fn whole(&self, name: &[Letter]) -> bool {
        walk(&self.tokens, name, Walk::Whole, 0, false)
    }

    fn begins(&self, name: &[Letter]) -> bool {
        walk(&self.tokens, name, Walk::Cut, 0, false)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// The name must use up the pattern.
    Whole,
    /// The name may end anywhere the cut rules allow.
    Cut,
}

/// Matches `name` against `tokens`; `literals` counts the observed characters matched by
/// literal characters so far, `anchored` whether the last letter was matched by a literal or a
/// digit run (not by `*`).
fn walk(tokens: &[Token], name: &[Letter], how: Walk, literals: usize, anchored: bool) -> bool {
    let Some((&letter, rest)) = name.split_first() else {
        return match how {
            Walk::Whole => tokens.iter().all(|t| *t == Token::Any),
            Walk::Cut => anchored && literals >= CUT_KEEPS_LITERALS,
        };
    };
    let Some((&token, later)) = tokens.split_first() else {
        return false;
    };
    match token {
        Token::Literal(c) => {
            let (fits, observed) = match letter {
                Letter::Exact(x) => (x == c, true),
                Letter::SomeSeparator => (SEPARATORS.contains(&c), false),
                Letter::SomeDigit => (c.is_ascii_digit(), false),
            };
            fits && walk(later, rest, how, literals + usize::from(observed), true)
        }
        Token::Digits => {
            let digit = match letter {
                Letter::Exact(x) => x.is_ascii_digit(),
                Letter::SomeDigit => true,
                Letter::SomeSeparator => false,
            };
            digit
                && (walk(later, rest, how, literals, true)
                    || walk(tokens, rest, how, literals, true))
        }
        Token::Any => {
            walk(later, name, how, literals, anchored) || walk(tokens, rest, how, literals, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> Pattern {
        Pattern::new(text).unwrap()
    }

    #[test]
    fn a_pool_matches_whole_without_its_counter_or_cut_at_15_bytes() {
        // (pattern, pool name as observed, matches): names from the runtimes' own code and
        // from /proc on this machine.
        let table = [
            // The full name, as a thread dump gives it, and without its counter.
            (
                "ForkJoinPool.commonPool-worker-#",
                "ForkJoinPool.commonPool-worker-3",
                true,
            ),
            (
                "ForkJoinPool.commonPool-worker-#",
                "ForkJoinPool.commonPool-worker",
                true,
            ),
            // /proc keeps 15 bytes.
            ("ForkJoinPool.commonPool-worker-#", "ForkJoinPool.co", true),
            // A pool of its own, `new ForkJoinPool()`: not the common pool, whole or cut.
            (
                "ForkJoinPool.commonPool-worker-#",
                "ForkJoinPool-1-worker",
                false,
            ),
            ("ForkJoinPool.commonPool-worker-#", "ForkJoinPool-1", false),
            // Tomcat: the executor, not the poller or the acceptor (cut the same way).
            ("http-nio-*-exec-#", "http-nio-8080-exec", true),
            ("http-nio-*-exec-#", "http-nio-8080-e", true),
            ("http-nio-*-exec-#", "http-nio-8080-P", false),
            ("http-nio-*-exec-#", "http-nio-8080-A", false),
            // A five-digit port: `http-nio-12345-exec-1` is cut to `http-nio-12345-`, whose
            // pool drops the dash.
            ("http-nio-*-exec-#", "http-nio-12345", true),
            // Jetty's qtp + hash code, then the thread's id.
            ("qtp#-#", "qtp1734325451", true),
            ("qtp#-#", "qtp", false),
            // Akka: the system's name comes first.
            (
                "*-akka.actor.default-dispatcher-#",
                "default-akka.actor.default-dispatcher",
                true,
            ),
            ("*-akka.actor.default-dispatcher-#", "MySystem-akka.a", true),
            // A leading `*` matches no cut name by itself.
            (
                "*-akka.actor.default-dispatcher-#",
                "some-thread-nam",
                false,
            ),
            ("*-akka.actor.default-dispatcher-#", "cp-demo-actors", false),
            // CPython's names, as py-spy gives them (the pool strips `_2`).
            ("ThreadPoolExecutor-#_#", "ThreadPoolExecutor-0", true),
            ("ThreadPoolExecutor-#_#", "ThreadPoolExecutor-0_2", true),
            ("ThreadPoolExecutor-#_#", "ThreadPoolExecutor", false),
            ("asyncio_#", "asyncio", true),
            ("asyncio_#", "asyncio_0", true),
            ("asyncio_#", "python3", false),
            // Processes: `php-fpm8.2` is pooled as `php-fpm8` (a counter after a dot).
            ("php-fpm#.#", "php-fpm8.2", true),
            ("php-fpm#.#", "php-fpm8", true),
            ("php-fpm#.#", "php", false),
            ("apache2", "apache2", true),
            ("apache2", "apache", false),
            // Puma names its threads `puma srv tp 001`: exactly 15 bytes.
            ("puma srv tp #", "puma srv tp", true),
            // Sidekiq's `sidekiq.default/processor` is cut to `sidekiq.default`; its heartbeat
            // thread, cut to `sidekiq.heartbe`, is not a processor (the cut is inside `*`).
            ("sidekiq.default/processor", "sidekiq.default", true),
            ("sidekiq.*/processor", "sidekiq.heartbe", false),
            ("sidekiq.*/processor", "sidekiq.default", false),
            // Undertow's task threads.
            ("XNIO-# task-#", "XNIO-1 task", true),
            ("XNIO-# task-#", "XNIO-1 I/O", false),
            // HikariCP's housekeeper, cut.
            ("HikariPool-# housekeeper", "HikariPool-1 ho", true),
            // libuv names every worker the same.
            ("libuv-worker", "libuv-worker", true),
            ("libuv-worker", "node", false),
        ];
        for (text, pool, expected) in table {
            assert_eq!(
                pattern(text).matches_pool(pool),
                expected,
                "pattern {text:?}, pool {pool:?}"
            );
        }
    }

    #[test]
    fn frames_match_on_their_beginning() {
        let hikari = pattern("com.zaxxer.hikari.pool.HikariPool.getConnection");
        assert!(hikari.matches_frame("com.zaxxer.hikari.pool.HikariPool.getConnection"));
        assert!(hikari
            .matches_frame("com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:181)"));
        assert!(!hikari.matches_frame("com.zaxxer.hikari.pool.HikariPool.close"));
        assert!(!hikari.matches_frame("java.net.http.HttpClient.send"));
    }

    #[test]
    fn a_pattern_needs_plain_characters() {
        assert!(Pattern::new("*").is_err());
        assert!(Pattern::new("#-#").is_err());
        assert!(Pattern::new("qtp#-#").is_ok());
    }
}
