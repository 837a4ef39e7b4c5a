//! A pool's default size that follows the cores, as the catalogue writes it (`size_rule =
//! "max(4, cpus)"`): parsed once into a typed expression ([`SizeRule::parse`], which refuses a
//! malformed rule in one line), evaluated with what the target counts ([`UsableCores`]) when a
//! place is checked against the limit it claims to explain.
//!
//! A rule is integers, one kind of count ([`CoreCount`]: `cpus` or `cores`), `+`, `-`, `*`,
//! parentheses, and `max(a, b)`, `min(a, b)`: `max(4, cpus)` (pgx's pgxpool), `cores - 1`,
//! `2 * cores`, `max(1, cores - 1)`. Which count a default reads is the runtime's, and they
//! differ under a CPU quota: Go's `runtime.NumCPU()` is the CPUs the process may run on
//! (`sched_getaffinity`) whatever its quota, and neither it nor pgxpool reads `GOMAXPROCS`;
//! the JDK's `availableProcessors()` in a container is the quota rounded up. So the entry says
//! which it means, and the sweep supplies both.
use chokepoint_result::{CoreCount, DefaultHere};

/// What the target counts: its CPUs, and its control group's CPU quota when it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsableCores {
    /// The CPUs the target may run on (the sweep's count of them: `SweepContext::cores`).
    pub cpus: u32,
    /// Cores its CPU quota allows (quota / period), when it has one.
    pub quota: Option<f64>,
}

impl UsableCores {
    /// How many of `what` the target counts. A quota's cores are rounded up, as the JDK rounds
    /// them (a quota of 1.5 cores lets 2 threads run at once), and never more than its CPUs.
    pub fn count(&self, what: CoreCount) -> u32 {
        match (what, self.quota) {
            (CoreCount::Cores, Some(quota)) if quota > 0.0 => {
                (quota.ceil() as u32).clamp(1, self.cpus.max(1))
            }
            _ => self.cpus,
        }
    }
}

/// A default size as a rule of the cores.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeRule {
    expr: Expr,
    counts: CoreCount,
    text: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Number(i64),
    Count,
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    Min(Box<Expr>, Box<Expr>),
}

impl Expr {
    fn at(&self, n: i64) -> i64 {
        match self {
            Expr::Number(k) => *k,
            Expr::Count => n,
            Expr::Add(a, b) => a.at(n).saturating_add(b.at(n)),
            Expr::Sub(a, b) => a.at(n).saturating_sub(b.at(n)),
            Expr::Mul(a, b) => a.at(n).saturating_mul(b.at(n)),
            Expr::Max(a, b) => a.at(n).max(b.at(n)),
            Expr::Min(a, b) => a.at(n).min(b.at(n)),
        }
    }
}

/// How to write one, said with every refusal.
const FORM: &str =
    "write it of whole numbers, `cpus` or `cores`, + - *, max(a, b), min(a, b): e.g. `max(4, cpus)`, `cores - 1`, `2 * cores`";

impl SizeRule {
    /// Reads a rule; the error is one line saying what was wrong and how to write one.
    pub fn parse(text: &str) -> Result<SizeRule, String> {
        let tokens = tokens(text).map_err(|e| format!("{e}; {FORM}"))?;
        let mut parser = Parser {
            tokens: &tokens,
            at: 0,
            counts: None,
        };
        let expr = parser.sum().map_err(|e| format!("{e}; {FORM}"))?;
        if let Some(extra) = parser.tokens.get(parser.at) {
            return Err(format!(
                "`{}` after the end of the rule; {FORM}",
                extra.text()
            ));
        }
        let counts = parser.counts.ok_or_else(|| {
            format!("no `cpus` or `cores` in it: a fixed default is `size = N`; {FORM}")
        })?;
        Ok(SizeRule {
            expr,
            counts,
            text: text.split_whitespace().collect::<Vec<_>>().join(" "),
        })
    }

    /// The rule as written (its spaces evened out).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What it counts.
    pub fn counts(&self) -> CoreCount {
        self.counts
    }

    /// The size at `n` of what it counts; `None` below 1 (no cap it could be).
    pub fn at_count(&self, n: u32) -> Option<u32> {
        u32::try_from(self.expr.at(i64::from(n)))
            .ok()
            .filter(|size| *size >= 1)
    }

    /// The size on a target that counts `cores`, with what it counted.
    pub fn on(&self, cores: &UsableCores) -> Option<DefaultHere> {
        let n = cores.count(self.counts);
        Some(DefaultHere {
            size: self.at_count(n)?,
            counted: Some((self.counts, n)),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(i64),
    Word(String),
    Sign(char),
}

impl Token {
    fn text(&self) -> String {
        match self {
            Token::Number(n) => n.to_string(),
            Token::Word(w) => w.clone(),
            Token::Sign(c) => c.to_string(),
        }
    }
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() {
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            let n = digits
                .parse()
                .map_err(|_| format!("the number {digits} is too large"))?;
            out.push(Token::Number(n));
        } else if c.is_ascii_alphabetic() {
            let mut word = String::new();
            while let Some(w) = chars
                .peek()
                .filter(|w| w.is_ascii_alphanumeric() || **w == '_')
            {
                word.push(*w);
                chars.next();
            }
            out.push(Token::Word(word));
        } else if "+-*(),".contains(c) {
            out.push(Token::Sign(c));
            chars.next();
        } else {
            return Err(format!("`{c}` is not part of a rule"));
        }
    }
    if out.is_empty() {
        return Err("it is empty".to_string());
    }
    Ok(out)
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    counts: Option<CoreCount>,
}

impl Parser<'_> {
    fn next(&mut self) -> Option<&Token> {
        let token = self.tokens.get(self.at);
        self.at += 1;
        token
    }

    fn peek_sign(&self, sign: char) -> bool {
        self.tokens.get(self.at) == Some(&Token::Sign(sign))
    }

    fn expect(&mut self, sign: char) -> Result<(), String> {
        match self.next() {
            Some(Token::Sign(c)) if *c == sign => Ok(()),
            Some(other) => Err(format!("`{sign}` expected, not `{}`", other.text())),
            None => Err(format!("`{sign}` expected at the end")),
        }
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut left = self.product()?;
        loop {
            if self.peek_sign('+') {
                self.at += 1;
                left = Expr::Add(Box::new(left), Box::new(self.product()?));
            } else if self.peek_sign('-') {
                self.at += 1;
                left = Expr::Sub(Box::new(left), Box::new(self.product()?));
            } else {
                return Ok(left);
            }
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut left = self.atom()?;
        while self.peek_sign('*') {
            self.at += 1;
            left = Expr::Mul(Box::new(left), Box::new(self.atom()?));
        }
        Ok(left)
    }

    fn atom(&mut self) -> Result<Expr, String> {
        match self.next().cloned() {
            Some(Token::Number(n)) => Ok(Expr::Number(n)),
            Some(Token::Sign('(')) => {
                let inner = self.sum()?;
                self.expect(')')?;
                Ok(inner)
            }
            Some(Token::Word(word)) => match word.as_str() {
                "cpus" | "cores" => {
                    let counts = if word == "cpus" {
                        CoreCount::Cpus
                    } else {
                        CoreCount::Cores
                    };
                    match self.counts {
                        Some(other) if other != counts => {
                            Err("both `cpus` and `cores`: a runtime counts one of them".to_string())
                        }
                        _ => {
                            self.counts = Some(counts);
                            Ok(Expr::Count)
                        }
                    }
                }
                "max" | "min" => {
                    self.expect('(')?;
                    let a = self.sum()?;
                    self.expect(',')?;
                    let b = self.sum()?;
                    self.expect(')')?;
                    let (a, b) = (Box::new(a), Box::new(b));
                    Ok(if word == "max" {
                        Expr::Max(a, b)
                    } else {
                        Expr::Min(a, b)
                    })
                }
                other => Err(format!("`{other}` is not `cpus`, `cores`, `max` or `min`")),
            },
            Some(other) => Err(format!(
                "`{}` where a number or a count belongs",
                other.text()
            )),
            None => Err("it ends where a number or a count belongs".to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_evaluate_at_the_count_they_name() {
        // (rule, the count it reads, its size at 1, 2, 16 and 64 of that count).
        let table = [
            ("max(4, cpus)", CoreCount::Cpus, [4, 4, 16, 64]),
            ("cores", CoreCount::Cores, [1, 2, 16, 64]),
            ("2 * cores", CoreCount::Cores, [2, 4, 32, 128]),
            ("max(1, cores - 1)", CoreCount::Cores, [1, 1, 15, 63]),
            ("min(64, max(8, cores))", CoreCount::Cores, [8, 8, 16, 64]),
            ("10*cores", CoreCount::Cores, [10, 20, 160, 640]),
            ("(cpus + 4) * 2", CoreCount::Cpus, [10, 12, 40, 136]),
            ("min(32, cores + 4)", CoreCount::Cores, [5, 6, 20, 32]),
        ];
        for (text, counts, sizes) in table {
            let rule = SizeRule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(rule.counts(), counts, "{text}");
            for (n, size) in [1, 2, 16, 64].into_iter().zip(sizes) {
                assert_eq!(rule.at_count(n), Some(size), "{text} at {n}");
            }
        }
        // Below one is no cap: `cores - 1` on one core.
        assert_eq!(SizeRule::parse("cores - 1").unwrap().at_count(1), None);
        assert_eq!(SizeRule::parse("cores - 1").unwrap().at_count(16), Some(15));
    }

    #[test]
    fn the_quota_counts_for_cores_not_for_cpus() {
        // (CPUs, quota, cpus counted, cores counted).
        let table = [
            (2, None, 2, 2),
            (16, None, 16, 16),
            (64, Some(4.0), 64, 4),
            (64, Some(1.5), 64, 2),
            (16, Some(0.5), 16, 1),
            (2, Some(8.0), 2, 2),
        ];
        for (cpus, quota, as_cpus, as_cores) in table {
            let usable = UsableCores { cpus, quota };
            assert_eq!(usable.count(CoreCount::Cpus), as_cpus, "{usable:?}");
            assert_eq!(usable.count(CoreCount::Cores), as_cores, "{usable:?}");
        }
        let pgxpool = SizeRule::parse("max(4, cpus)").unwrap();
        let here = pgxpool
            .on(&UsableCores {
                cpus: 64,
                quota: Some(2.0),
            })
            .unwrap();
        assert_eq!(here.size, 64, "runtime.NumCPU() ignores the quota");
        assert_eq!(here.counted, Some((CoreCount::Cpus, 64)));
    }

    #[test]
    fn a_malformed_rule_is_refused_in_one_line_that_says_how_to_write_one() {
        // (rule, what the refusal names).
        let table = [
            ("", "it is empty"),
            ("max(4, cores", "`)` expected at the end"),
            ("max 4, cores)", "`(` expected, not `4`"),
            ("threads", "`threads` is not `cpus`, `cores`"),
            ("4", "no `cpus` or `cores`"),
            ("cores / 2", "`/` is not part of a rule"),
            ("cores cores", "`cores` after the end"),
            ("max(cpus, cores)", "both `cpus` and `cores`"),
            ("2 *", "it ends where a number or a count belongs"),
            ("99999999999999999999 * cores", "too large"),
        ];
        for (text, names) in table {
            let err = SizeRule::parse(text).unwrap_err();
            assert!(err.contains(names), "{text:?}: {err}");
            assert!(err.contains("e.g. `max(4, cpus)`"), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{text:?}: {err}");
        }
    }
}
