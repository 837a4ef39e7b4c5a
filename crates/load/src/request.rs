//! The requests of a run, each rendered once into the bytes every exchange writes as they are.
use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderName, HeaderValue, Method, Uri};

/// One request as it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The whole request: request line, headers, body.
    pub bytes: Bytes,
    /// HEAD: responses carry no body whatever their headers say.
    pub head: bool,
}

/// Renders a request as every exchange sends it: the Host header, `Connection: close` without
/// keep-alive, Content-Length when there is a body (or the method expects one), then the user's
/// headers in order.
pub fn render(
    method: &Method,
    path: &Uri,
    host: &str,
    user: &[(String, String)],
    keepalive: bool,
    body: &Bytes,
) -> Result<Request, String> {
    let host_value = HeaderValue::from_str(host)
        .map_err(|_| format!("the host '{host}' cannot be sent as a Host header"))?;
    let mut out = BytesMut::with_capacity(128 + body.len());
    let line = |out: &mut BytesMut, name: &[u8], value: &[u8]| {
        out.put_slice(name);
        out.put_slice(b": ");
        out.put_slice(value);
        out.put_slice(b"\r\n");
    };
    out.put_slice(method.as_str().as_bytes());
    out.put_u8(b' ');
    out.put_slice(path.to_string().as_bytes());
    out.put_slice(b" HTTP/1.1\r\n");
    line(&mut out, b"host", host_value.as_bytes());
    if !keepalive {
        line(&mut out, b"connection", b"close");
    }
    if !body.is_empty() || matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        line(
            &mut out,
            b"content-length",
            body.len().to_string().as_bytes(),
        );
    }
    for (name, value) in user {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("'{name}' is not a valid header name"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header '{name}' is not valid"))?;
        line(&mut out, name.as_str().as_bytes(), value.as_bytes());
    }
    out.put_slice(b"\r\n");
    out.put_slice(body);
    Ok(Request {
        bytes: out.freeze(),
        head: *method == Method::HEAD,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_rendered_once_with_their_headers() {
        let request = render(
            &Method::POST,
            &"/a?b=1".parse().unwrap(),
            "h:1",
            &[("X-One".into(), "1".into())],
            false,
            &Bytes::from_static(b"hi"),
        )
        .unwrap();
        assert_eq!(
            request.bytes,
            "POST /a?b=1 HTTP/1.1\r\nhost: h:1\r\nconnection: close\r\ncontent-length: 2\r\n\
             x-one: 1\r\n\r\nhi"
        );
        let get = render(
            &Method::GET,
            &"/".parse().unwrap(),
            "h",
            &[],
            true,
            &Bytes::new(),
        )
        .unwrap();
        assert_eq!(get.bytes, "GET / HTTP/1.1\r\nhost: h\r\n\r\n");
        assert!(!get.head);
    }
}
