//! Who may read the observer: the rules of [`crate`]'s doc as functions. A token is read from a
//! file (never a flag: it would show in `ps`), is at least [`MIN_TOKEN_LEN`] characters, and is
//! compared in constant time.
use std::net::SocketAddr;
use std::path::Path;
use subtle::ConstantTimeEq;

/// The shortest token accepted (`openssl rand -hex 32` gives 64 characters).
pub const MIN_TOKEN_LEN: usize = 16;

/// The token in `path` (surrounding whitespace removed), or one line saying what is wrong.
pub fn read_token(path: &Path, flag: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{flag} {}: cannot read it: {e}", path.display()))?;
    let token = text.trim();
    if token.len() < MIN_TOKEN_LEN {
        return Err(format!(
            "{flag} {}: the token is {} characters long; use at least {MIN_TOKEN_LEN} (openssl rand -hex 32 > {})",
            path.display(),
            token.len(),
            path.display()
        ));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{flag} {}: the token holds spaces or control characters; put one word in the file",
            path.display()
        ));
    }
    Ok(token.to_string())
}

/// Refuses to serve on an address other machines can reach without a token.
pub fn check_listen(addr: SocketAddr, token: Option<&str>) -> Result<(), String> {
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(format!(
            "--listen {addr} is not a loopback address: give --token-file FILE (every request must then carry its token), or listen on 127.0.0.1"
        ));
    }
    Ok(())
}

/// Whether an `Authorization` header's value carries `token` (`Bearer TOKEN`), compared in
/// constant time. Always true when no token is required.
pub fn authorized(expected: Option<&str>, header: Option<&[u8]>) -> bool {
    let Some(expected) = expected else {
        return true;
    };
    let Some(given) = header.and_then(|value| value.strip_prefix(b"Bearer ")) else {
        return false;
    };
    // Lengths differ: not equal; `ct_eq` answers in constant time for equal lengths only,
    // and the token's length is no secret worth a timing channel (at least 16 characters).
    given.ct_eq(expected.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bearer_token_itself_passes() {
        let token = Some("0123456789abcdef0123");
        assert!(authorized(token, Some(b"Bearer 0123456789abcdef0123")));
        for wrong in [
            &b"Bearer 0123456789abcdef0124"[..],
            b"Bearer 0123456789abcdef012",
            b"Bearer 0123456789abcdef01234",
            b"bearer 0123456789abcdef0123",
            b"0123456789abcdef0123",
            b"Basic MDEyMzQ1Njc4OWFiY2RlZjAxMjM=",
            b"Bearer ",
        ] {
            assert!(
                !authorized(token, Some(wrong)),
                "{}",
                String::from_utf8_lossy(wrong)
            );
        }
        assert!(!authorized(token, None));
        assert!(authorized(None, None));
    }

    #[test]
    fn a_token_is_needed_off_loopback_only() {
        let at = |text: &str| text.parse::<SocketAddr>().unwrap();
        assert!(check_listen(at("127.0.0.1:7070"), None).is_ok());
        assert!(check_listen(at("[::1]:7070"), None).is_ok());
        assert!(check_listen(at("0.0.0.0:7070"), None).is_err());
        assert!(check_listen(at("10.201.0.2:7070"), None).is_err());
        assert!(check_listen(at("10.201.0.2:7070"), Some("t")).is_ok());
    }

    #[test]
    fn a_short_or_spaced_token_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("cp-remote-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "short\n").unwrap();
        assert!(read_token(&file, "--token-file")
            .unwrap_err()
            .contains("at least 16"));
        std::fs::write(&file, "0123456789 abcdef0123\n").unwrap();
        assert!(read_token(&file, "--token-file").is_err());
        std::fs::write(&file, "  0123456789abcdef0123\n").unwrap();
        assert_eq!(
            read_token(&file, "--token-file").unwrap(),
            "0123456789abcdef0123"
        );
        assert!(read_token(&dir.join("missing"), "--token-file").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
