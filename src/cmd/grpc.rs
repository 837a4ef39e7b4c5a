//! The gRPC flags of `load` and `sweep` (`--grpc`, `--descriptor-set`, `--data`): they turn the
//! run's requests into gRPC unary calls, with the schema read by `chokepoint_grpc`.
//!
//! One method: `--grpc package.Service/Method` with `--data JSON` calls it at the URL's server
//! (the URL has no path: the method is the path). A mix of methods: `--descriptor-set` with
//! `--targets FILE`, whose every request is `POST http://host:port/package.Service/Method`, its
//! `@file` body the request message as JSON (none: the empty message), its header lines sent as
//! metadata. Either way the run speaks HTTP/2 (h2c over `http://`, h2 by ALPN over `https://`).
//! Without `--descriptor-set`, `--grpc`'s schema is asked from the server's reflection service
//! (`chokepoint_grpc::reflection`) before any load.
use anyhow::Context;
use chokepoint_grpc::Schema;
use chokepoint_load::{GrpcRun, LoadConfig};
use std::path::PathBuf;

/// `--grpc`, `--descriptor-set`, `--data`.
#[derive(Debug, Clone, clap::Args)]
pub struct GrpcArgs {
    /// Send gRPC unary calls to this method, package.Service/Method, over HTTP/2 (h2c over
    /// http://, h2 over https://): the URL is the server's, http://host:port
    #[arg(long, value_name = "METHOD", conflicts_with_all = ["method", "body", "body_file", "targets"])]
    pub grpc: Option<String>,
    /// The services' schema, as `protoc --include_imports --descriptor_set_out=FILE` writes it
    /// (default for --grpc: asked from the server's reflection service); with --targets and no
    /// --grpc, each request of the file is a call (POST http://host:port/package.Service/Method,
    /// its @file body the message as JSON)
    #[arg(long, value_name = "FILE")]
    pub descriptor_set: Option<PathBuf>,
    /// --grpc: the request message as JSON (protobuf's JSON mapping; default {})
    #[arg(long, value_name = "JSON", requires = "grpc")]
    pub data: Option<String>,
}

impl GrpcArgs {
    /// Makes `config`'s requests gRPC calls when the flags say so; a descriptor set that does not
    /// parse, a method it does not have, or a message that does not fit is one error naming it.
    pub fn apply(&self, config: &mut LoadConfig) -> anyhow::Result<()> {
        let schema = match (&self.descriptor_set, &self.grpc) {
            (Some(path), _) => {
                let bytes = std::fs::read(path).with_context(|| {
                    format!("--descriptor-set {}: cannot read it", path.display())
                })?;
                Schema::from_descriptor_set(&bytes, &path.display().to_string())?
            }
            (None, Some(name)) => by_reflection(config, name)?,
            (None, None) => return Ok(()),
        };
        let methods = match &self.grpc {
            Some(name) => vec![one_method(config, &schema, name, self.data.as_deref())?],
            None if !config.targets.is_empty() => targets_as_calls(config, &schema)?,
            None => anyhow::bail!(
                "--descriptor-set is the schema of gRPC calls: add --grpc package.Service/Method \
                 (or --targets FILE whose requests are calls)"
            ),
        };
        config.http2 = true;
        config.grpc = Some(GrpcRun { methods });
        Ok(())
    }
}

/// The longest the server's reflection is given, per call.
const REFLECTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// `--grpc NAME` without `--descriptor-set`: the schema of NAME's service from the server's
/// reflection service, before any load; a server without it is one line saying what to give.
fn by_reflection(config: &LoadConfig, name: &str) -> anyhow::Result<Schema> {
    let service = name
        .trim()
        .trim_start_matches('/')
        .rsplit_once('/')
        .or_else(|| name.trim().rsplit_once('.'))
        .map(|(service, _)| service)
        .filter(|service| !service.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!("--grpc '{name}' is not a method: write it as package.Service/Method")
        })?;
    let timeout = config.timeout.min(REFLECTION_TIMEOUT);
    Ok(chokepoint_grpc::reflection::fetch(
        service,
        &config.url,
        |path, message| {
            chokepoint_load::grpc_call_once(&config.url, &config.trust, path, message, timeout).map(
                |answer| chokepoint_grpc::reflection::Answered {
                    messages: answer.messages,
                    status: answer.status,
                    status_message: answer.status_message,
                },
            )
        },
    )?)
}

/// `--grpc NAME --data JSON`: the URL's request becomes the call.
fn one_method(
    config: &mut LoadConfig,
    schema: &Schema,
    name: &str,
    data: Option<&str>,
) -> anyhow::Result<String> {
    let method = schema.method(name)?;
    let call = method.request(data.unwrap_or("{}"))?;
    let uri: http::Uri = config.url.parse()?;
    if uri.path() != "/" {
        anyhow::bail!(
            "{}: with --grpc the URL is the server's alone (http://host:port), the method is \
             the path",
            config.url
        );
    }
    config.url = format!("{}{}", config.url.trim_end_matches('/'), call.path);
    config.method = chokepoint_load::Method::POST;
    config.body = call.body;
    Ok(method.name())
}

/// `--descriptor-set` with `--targets`: each request of the file becomes its call.
fn targets_as_calls(config: &mut LoadConfig, schema: &Schema) -> anyhow::Result<Vec<String>> {
    let mut methods = Vec::new();
    for target in &mut config.targets {
        let which = format!("--targets: {} {}", target.method, target.url);
        if target.method != chokepoint_load::Method::POST {
            anyhow::bail!(
                "{which}: a gRPC call is a POST: write it as POST {}",
                target.url
            );
        }
        let uri: http::Uri = target.url.parse()?;
        let method = schema.method(uri.path()).with_context(|| which.clone())?;
        let json = match target.body.is_empty() {
            true => "{}".to_string(),
            false => String::from_utf8(target.body.to_vec())
                .with_context(|| format!("{which}: its @file is not UTF-8 JSON"))?,
        };
        let call = method.request(&json).with_context(|| which.clone())?;
        target.body = call.body;
        methods.push(method.name());
    }
    Ok(methods)
}
