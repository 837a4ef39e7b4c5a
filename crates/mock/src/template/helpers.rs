//! WireMock's Handlebars helpers that stubs use most, written on handlebars-rust's
//! `HelperDef`: `jsonPath`, `now`, `randomValue`, `math`, `size`, and `neq` (handlebars-rust
//! has `eq`, `ne`, `gt`, `gte`, `lt`, `lte`, `and`, `or`, `not`, `#if`, `#unless`, `#each`,
//! `#with`, `lookup` itself). Each follows the Java helper of the same name in WireMock's
//! `extension/responsetemplating/helpers/`; `jsonPath` writes an object as WireMock's Jackson
//! does (its default pretty printer) and a list as json-smart does (compact).
use super::dates;
use handlebars::{
    Context, Handlebars, Helper, HelperDef, HelperResult, Output, RenderContext, RenderError,
    RenderErrorReason, ScopedJson,
};
use rand::Rng;
use serde_json::{json, Value};

/// The helpers handlebars-rust has itself.
const BUILT_IN: &[&str] = &[
    "if", "unless", "each", "with", "lookup", "raw", "log", "eq", "ne", "gt", "gte", "lt", "lte",
    "and", "or", "not", "len",
];

/// WireMock's helpers written here.
const WIREMOCK: &[&str] = &[
    "jsonPath",
    "now",
    "randomValue",
    "math",
    "size",
    "neq",
    "assign",
];

/// Whether a template may call this helper.
pub fn is_known(name: &str) -> bool {
    BUILT_IN.contains(&name) || WIREMOCK.contains(&name)
}

/// Registers the helpers.
pub fn register(registry: &mut Handlebars<'static>) {
    registry.register_helper("jsonPath", Box::new(JsonPathHelper));
    registry.register_helper("now", Box::new(NowHelper));
    registry.register_helper("randomValue", Box::new(RandomValueHelper));
    registry.register_helper("math", Box::new(MathHelper));
    registry.register_helper("size", Box::new(SizeHelper));
    registry.register_helper("neq", Box::new(NeqHelper));
    registry.register_helper("assign", Box::new(super::assign::AssignHelper));
}

fn helper_error(helper: &str, message: impl Into<String>) -> RenderError {
    RenderErrorReason::Other(format!("{helper}: {}", message.into())).into()
}

fn param<'a>(h: &'a Helper<'_>, index: usize) -> Option<&'a Value> {
    h.param(index).map(|p| p.value())
}

fn hash_text(h: &Helper<'_>, key: &str) -> Option<String> {
    h.hash_get(key).map(|v| match v.value() {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// `{{jsonPath request.body '$.a.b' default='x'}}`: the value at the path; a definite path
/// gives one value, a path with a wildcard, a filter, a slice or `..` gives a list. A value
/// that is missing gives `default`, or nothing.
struct JsonPathHelper;

impl JsonPathHelper {
    fn evaluate(h: &Helper<'_>) -> Result<Value, RenderError> {
        let input = param(h, 0).cloned().unwrap_or(Value::Null);
        let document = match input {
            Value::Null => return Ok(Value::String(String::new())),
            Value::String(text) if text.is_empty() => return Ok(Value::String(text)),
            Value::String(text) => serde_json::from_str::<Value>(&text)
                .map_err(|_| helper_error("jsonPath", format!("{text} is not valid JSON")))?,
            other => other,
        };
        let Some(Value::String(path)) = param(h, 1) else {
            return Err(helper_error("jsonPath", "The JSONPath cannot be empty"));
        };
        let query = crate::json_match::JaywayPath::parse(path).map_err(|_| {
            helper_error(
                "jsonPath",
                format!("{path} is not a valid JSONPath expression"),
            )
        })?;
        let mut nodes = query.query(&document);
        let found = if is_definite(path) {
            (nodes.len() == 1).then(|| nodes.remove(0))
        } else {
            Some(Value::Array(nodes))
        };
        Ok(match found {
            Some(Value::Null) | None => h
                .hash_get("default")
                .map(|d| d.value().clone())
                .unwrap_or_else(|| Value::String(String::new())),
            Some(value) => value,
        })
    }
}

/// Whether a JSONPath names one place (Jayway returns a value) rather than many (a list).
pub fn is_definite(path: &str) -> bool {
    !(path.contains("..")
        || path.contains('*')
        || path.contains("[?")
        || path.contains(':')
        || path
            .split('[')
            .skip(1)
            .any(|part| part.split(']').next().unwrap_or("").contains(',')))
}

impl HelperDef for JsonPathHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        Ok(ScopedJson::Derived(Self::evaluate(h)?))
    }

    fn call<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        r: &'reg Handlebars<'reg>,
        _: &'rc Context,
        rc: &mut RenderContext<'reg, 'rc>,
        out: &mut dyn Output,
    ) -> HelperResult {
        // WireMock writes an object with Jackson's pretty printer, a list with json-smart's
        // `toString` (compact).
        let text = match Self::evaluate(h)? {
            value @ Value::Object(_) => jackson_pretty(&value),
            value @ Value::Array(_) => value.to_string(),
            Value::String(text) => text,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let text = if rc.is_disable_escape() {
            text
        } else {
            r.get_escape_fn()(&text)
        };
        out.write(&text)?;
        Ok(())
    }
}

/// JSON as Jackson's default pretty printer writes it: objects one field a line, indented by
/// two spaces per object level, `"key" : value`; lists on one line, `[ 1, 2 ]`.
pub fn jackson_pretty(value: &Value) -> String {
    fn write(value: &Value, level: usize, out: &mut String) {
        match value {
            Value::Object(map) if map.is_empty() => out.push_str("{ }"),
            Value::Object(map) => {
                out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('\n');
                    out.push_str(&"  ".repeat(level + 1));
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push_str(" : ");
                    write(item, level + 1, out);
                }
                out.push('\n');
                out.push_str(&"  ".repeat(level));
                out.push('}');
            }
            Value::Array(items) if items.is_empty() => out.push_str("[ ]"),
            Value::Array(items) => {
                out.push_str("[ ");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(item, level, out);
                }
                out.push_str(" ]");
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(value, 0, &mut out);
    out
}

/// `{{now format='yyyy-MM-dd' offset='3 days'}}`: the current time (UTC).
struct NowHelper;

impl HelperDef for NowHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let mut date = chrono::Utc::now();
        if let Some(offset) = hash_text(h, "offset") {
            date = dates::shift(date, &offset).map_err(|e| helper_error("now", e))?;
        }
        let text = dates::format(date, hash_text(h, "format").as_deref())
            .map_err(|e| helper_error("now", e))?;
        Ok(ScopedJson::Derived(Value::String(text)))
    }
}

/// `{{randomValue length=8 type='ALPHANUMERIC' uppercase=true}}`: lower case unless
/// `uppercase`; `type` is ALPHANUMERIC (the default), ALPHABETIC, NUMERIC,
/// ALPHANUMERIC_AND_SYMBOLS, HEXADECIMAL or UUID; any other gives printable ASCII.
struct RandomValueHelper;

/// The characters of each `randomValue` type (`None`: a UUID).
pub fn random_alphabet(kind: &str) -> Option<Vec<char>> {
    let range = |from: u8, to: u8| (from..=to).map(char::from);
    Some(match kind {
        "UUID" => return None,
        "ALPHANUMERIC" => range(b'0', b'9')
            .chain(range(b'A', b'Z'))
            .chain(range(b'a', b'z'))
            .collect(),
        "ALPHABETIC" => range(b'A', b'Z').chain(range(b'a', b'z')).collect(),
        "NUMERIC" => range(b'0', b'9').collect(),
        "HEXADECIMAL" => "ABCDEF0123456789".chars().collect(),
        "ALPHANUMERIC_AND_SYMBOLS" => range(33, 125).collect(),
        _ => range(32, 126).collect(),
    })
}

impl HelperDef for RandomValueHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let length = h
            .hash_get("length")
            .and_then(|v| v.value().as_u64())
            .unwrap_or(36)
            .min(1 << 20) as usize;
        let uppercase = h
            .hash_get("uppercase")
            .is_some_and(|v| v.value().as_bool() == Some(true));
        let kind = hash_text(h, "type").unwrap_or_else(|| "ALPHANUMERIC".into());
        let raw = match random_alphabet(&kind) {
            None => crate::mapping::new_id(),
            Some(alphabet) => {
                let mut rng = rand::thread_rng();
                (0..length)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect()
            }
        };
        let text = if uppercase {
            raw.to_uppercase()
        } else {
            raw.to_lowercase()
        };
        Ok(ScopedJson::Derived(Value::String(text)))
    }
}

/// A number as WireMock's `math` reads it (a string holding one, or 0), with its decimal
/// places (Java's `BigDecimal` scale).
fn operand(value: &Value) -> (f64, u32) {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        _ => return (0.0, 0),
    };
    match text.parse::<f64>() {
        Ok(number) => {
            let scale = text
                .split_once('.')
                .map_or(0, |(_, decimals)| decimals.len() as u32);
            (number, scale)
        }
        Err(_) => (0.0, 0),
    }
}

/// `{{math 1 '+' 2}}` (`+ - * x / %`): whole numbers stay whole (`/` rounds half up, as
/// `BigDecimal.divide` at the left operand's scale does), others are decimals.
pub fn math(left: &Value, operator: &str, right: &Value) -> Result<Value, String> {
    let ((a, a_scale), (b, b_scale)) = (operand(left), operand(right));
    let whole = a_scale == 0 && b_scale == 0;
    let result = match operator {
        "+" => a + b,
        "-" => a - b,
        "*" | "x" => a * b,
        "/" if b == 0.0 => return Err("Division by zero".into()),
        "/" => {
            let factor = 10f64.powi(a_scale as i32);
            let quotient = (a / b * factor).abs();
            let rounded = (quotient + 0.5).floor() * (a / b).signum() / factor;
            if whole {
                return Ok(json!(rounded as i64));
            }
            rounded
        }
        "%" if b == 0.0 => return Err("Division by zero".into()),
        "%" => a % b,
        other => return Err(format!("{other} is not a valid mathematical operator")),
    };
    Ok(if whole && result.fract() == 0.0 && result.abs() < 9.0e15 {
        json!(result as i64)
    } else {
        json!(result)
    })
}

struct MathHelper;

impl HelperDef for MathHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let (Some(left), Some(operator), Some(right)) = (param(h, 0), param(h, 1), param(h, 2))
        else {
            return Err(helper_error(
                "math",
                "All maths functions require two operands and an operator as parameters e.g. 3 '+' 2",
            ));
        };
        let operator = operator.as_str().unwrap_or_default();
        let value = math(left, operator, right).map_err(|e| helper_error("math", e))?;
        Ok(ScopedJson::Derived(value))
    }
}

/// `{{size x}}`: the length of a string, a list or an object.
struct SizeHelper;

impl HelperDef for SizeHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        let size = match param(h, 0) {
            Some(Value::String(s)) => json!(s.chars().count()),
            Some(Value::Array(items)) => json!(items.len()),
            Some(Value::Object(map)) => json!(map.len()),
            _ => Value::Null,
        };
        Ok(ScopedJson::Derived(size))
    }
}

/// `{{neq a b}}`: WireMock's name for handlebars-rust's `ne`.
struct NeqHelper;

impl HelperDef for NeqHelper {
    fn call_inner<'reg: 'rc, 'rc>(
        &self,
        h: &Helper<'rc>,
        _: &'reg Handlebars<'reg>,
        _: &'rc Context,
        _: &mut RenderContext<'reg, 'rc>,
    ) -> Result<ScopedJson<'rc>, RenderError> {
        Ok(ScopedJson::Derived(Value::Bool(param(h, 0) != param(h, 1))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_follows_wiremocks_big_decimal_rules() {
        let table = [
            // (left, operator, right, what WireMock renders)
            (json!(1), "+", json!(2), "3"),
            (json!("10"), "-", json!(4), "6"),
            (json!(3), "x", json!(4), "12"),
            (json!(10), "/", json!(4), "3"),
            (json!(9), "/", json!(4), "2"),
            (json!(-10), "/", json!(4), "-3"),
            (json!(10.0), "/", json!(4), "2.5"),
            (json!(10), "%", json!(4), "2"),
            (json!("1.5"), "+", json!("1.25"), "2.75"),
            (json!("x"), "+", json!(2), "2"),
        ];
        for (left, operator, right, expected) in table {
            let value = math(&left, operator, &right).unwrap();
            let text = match &value {
                Value::Number(n) => n.to_string(),
                other => other.to_string(),
            };
            assert_eq!(text, expected, "{left} {operator} {right}");
        }
        assert!(math(&json!(1), "^", &json!(2)).is_err());
    }

    #[test]
    fn jackson_pretty_printing() {
        let value = json!({"a": [1, {"b": "x"}], "c": {}, "d": []});
        assert_eq!(
            jackson_pretty(&value),
            "{\n  \"a\" : [ 1, {\n    \"b\" : \"x\"\n  } ],\n  \"c\" : { },\n  \"d\" : [ ]\n}"
        );
    }

    #[test]
    fn definite_paths_give_one_value() {
        let table = [
            ("$.a.b", true),
            ("$.items[0].id", true),
            ("$['a']", true),
            ("$.items[*].id", false),
            ("$..id", false),
            ("$.items[?(@.qty > 1)]", false),
            ("$.items[0,1]", false),
            ("$.items[0:2]", false),
        ];
        for (path, definite) in table {
            assert_eq!(is_definite(path), definite, "{path}");
        }
    }
}
