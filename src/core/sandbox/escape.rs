//! Escaping every value the sandbox writes into its document: HTML attribute values, and CSS
//! custom-property values inside the theme `<style>` block.

/// `&`, `<`, `>`, `"` and `'` as character references: safe in a quoted attribute and in text.
pub fn html_attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A theme token value, made inert inside a declaration `--ns-x: <value>;`.
///
/// Characters outside a small safe set become CSS hex escapes (`\3c `), which the CSS tokenizer
/// reads back as the same code point *inside* an identifier or string, never as syntax: a value
/// cannot end its declaration (`;`), leave the rule (`}`), open a comment (`/*`) or close the
/// style element (`</style>`). Quoted strings that close on the same value stay strings (font
/// names); a quote without its partner is escaped. Parentheses stay only when balanced, so an
/// open `(` cannot swallow the declarations after it.
pub(crate) fn css_value(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let parens_ok = balanced_parens(&chars);
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' {
            if let Some(end) = chars[i + 1..].iter().position(|&q| q == c) {
                out.push(c);
                for &inner in &chars[i + 1..i + 1 + end] {
                    push_safe(&mut out, inner, false, None);
                }
                out.push(c);
                i += end + 2;
                continue;
            }
        }
        push_safe(&mut out, c, parens_ok, chars.get(i + 1).copied());
        i += 1;
    }
    out
}

fn push_safe(out: &mut String, c: char, parens_ok: bool, next: Option<char>) {
    let comment = (c == '/' && next == Some('*')) || (c == '*' && next == Some('/'));
    let safe = c.is_ascii_alphanumeric()
        || matches!(
            c,
            ' ' | '#' | '%' | ',' | '.' | '+' | '-' | '_' | '!' | '/' | '*'
        )
        || (parens_ok && matches!(c, '(' | ')'));
    if safe && !comment {
        out.push(c);
    } else {
        out.push_str(&format!("\\{:x} ", c as u32));
    }
}

/// Every `)` closes an earlier `(` and none is left open (quoted strings are skipped).
fn balanced_parens(chars: &[char]) -> bool {
    let mut depth = 0i64;
    let mut quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') if chars[i + 1..].contains(&c) => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn css_values() {
        for (value, want) in [
            ("#ffffff", "#ffffff"),
            ("oklch(65% 0.2 240)", "oklch(65% 0.2 240)"),
            ("\"Inter\", system-ui", "\"Inter\", system-ui"),
            ("calc(1px * 2)", "calc(1px * 2)"),
            (
                "red; } body { background: red",
                "red\\3b  \\7d  body \\7b  background\\3a  red",
            ),
            (
                "</style><script>alert(1)</script>",
                "\\3c /style\\3e \\3c script\\3e alert(1)\\3c /script\\3e ",
            ),
            ("calc(", "calc\\28 "),
            ("a) b (", "a\\29  b \\28 "),
            ("/* x */", "\\2f * x \\2a /"),
            ("\"unclosed", "\\22 unclosed"),
            ("\"a;b\"", "\"a\\3b b\""),
            ("a\\62 c", "a\\5c 62 c"),
            ("Noto Sans JP é", "Noto Sans JP \\e9 "),
        ] {
            assert_eq!(css_value(value), want, "{value}");
        }
    }

    #[test]
    fn attributes() {
        assert_eq!(
            html_attribute("\"><script>'&"),
            "&quot;&gt;&lt;script&gt;&#39;&amp;"
        );
    }
}
