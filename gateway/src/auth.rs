//! The authorization flags: `--http` as an OAuth 2.1 resource server (MCP authorization).

use std::net::SocketAddr;

use clap::{Arg, ArgAction, ArgMatches, Command};
use tonic_mcp_auth::Authorization;

use crate::error::Error;

/// The environment variable holding the introspection client's secret (never a flag: command
/// lines are visible to every user of the machine).
pub const INTROSPECTION_SECRET_ENV: &str = "GRPC_MCP_GATEWAY_INTROSPECTION_SECRET";

/// What the authorization flags ask for.
#[derive(Debug, Clone, Default)]
pub struct AuthSettings {
    /// `--auth-issuer`: the authorization server's issuer identifier.
    pub issuer: String,
    /// `--resource-url`: the public URL of the MCP endpoint; default `http://ADDR/mcp`.
    pub resource_url: Option<String>,
    /// `--auth-audience`: audiences accepted in place of the resource URL.
    pub audiences: Vec<String>,
    /// `--auth-scope`: scopes every request needs.
    pub scopes: Vec<String>,
    /// `--auth-read-scope`: scopes calls of read-only tools need.
    pub read_scopes: Vec<String>,
    /// `--auth-write-scope`: scopes calls of other tools need.
    pub write_scopes: Vec<String>,
    /// `--auth-jwks-uri`.
    pub jwks_uri: Option<String>,
    /// `--auth-introspection-client-id` (secret from [`INTROSPECTION_SECRET_ENV`]).
    pub introspection: Option<(String, String)>,
    /// `--forward-claim CLAIM=KEY`.
    pub forward_claims: Vec<(String, String)>,
    /// `--auth-forward-token`.
    pub forward_token: bool,
}

impl AuthSettings {
    /// The resource server settings for an endpoint listening on `bound`.
    ///
    /// # Errors
    ///
    /// Settings the runtime refuses (an `http` URL that is not loopback, a bad scope).
    pub fn authorization(&self, bound: SocketAddr) -> Result<Authorization, Error> {
        let resource = self
            .resource_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}/mcp"));
        let mut builder = Authorization::builder(&self.issuer, &resource);
        for audience in &self.audiences {
            builder = builder.audience(audience);
        }
        for scope in &self.scopes {
            builder = builder.required_scope(scope);
        }
        for scope in &self.read_scopes {
            builder = builder.read_only_scope(scope);
        }
        for scope in &self.write_scopes {
            builder = builder.write_scope(scope);
        }
        if let Some(uri) = &self.jwks_uri {
            builder = builder.jwks_uri(uri);
        }
        if let Some((client_id, secret)) = &self.introspection {
            builder = builder.introspection(None, client_id, secret);
        }
        builder
            .pass_token_through(self.forward_token)
            .build()
            .map_err(|e| match self.resource_url {
                None => Error::new(format!(
                    "{e}; set --resource-url to the public URL clients use for this endpoint"
                )),
                Some(_) => Error::new(e.to_string()),
            })
    }
}

/// Adds the authorization flags to `command`.
pub(crate) fn args(command: Command) -> Command {
    let many = |arg: Arg| arg.action(ArgAction::Append);
    let auth = |arg: Arg| arg.requires("auth-issuer").help_heading("Authorization");
    command
        .arg(
            Arg::new("auth-issuer")
                .long("auth-issuer")
                .value_name("URL")
                .requires("http")
                .help_heading("Authorization")
                .help("with --http: require OAuth access tokens issued by this authorization server (its issuer identifier; its RFC 8414 or OpenID metadata names its keys)"),
        )
        .arg(auth(
            Arg::new("resource-url")
                .long("resource-url")
                .value_name("URL")
                .help("the URL clients use for this endpoint, e.g. https://mcp.example.com/mcp (default http://ADDR/mcp, for loopback only); tokens must name it as audience"),
        ))
        .arg(auth(many(
            Arg::new("auth-audience")
                .long("auth-audience")
                .value_name("URI")
                .help("accept tokens for this audience instead of the resource URL (e.g. api://… for Microsoft Entra ID); repeatable"),
        )))
        .arg(auth(many(
            Arg::new("auth-scope")
                .long("auth-scope")
                .value_name("SCOPE")
                .help("a scope every request needs; repeatable"),
        )))
        .arg(auth(many(
            Arg::new("auth-read-scope")
                .long("auth-read-scope")
                .value_name("SCOPE")
                .help("a scope calls of read-only tools (readOnlyHint) need; repeatable"),
        )))
        .arg(auth(many(
            Arg::new("auth-write-scope")
                .long("auth-write-scope")
                .value_name("SCOPE")
                .help("a scope calls of every other tool need; repeatable"),
        )))
        .arg(auth(
            Arg::new("auth-jwks-uri")
                .long("auth-jwks-uri")
                .value_name("URL")
                .help("the authorization server's JWKS, instead of the one its metadata names"),
        ))
        .arg(auth(
            Arg::new("auth-introspection-client-id")
                .long("auth-introspection-client-id")
                .value_name("ID")
                .help(
                    "also accept opaque tokens, checked by RFC 7662 introspection as this client \
                     (its secret from the environment variable GRPC_MCP_GATEWAY_INTROSPECTION_SECRET)",
                ),
        ))
        .arg(auth(many(
            Arg::new("forward-claim")
                .long("forward-claim")
                .value_name("CLAIM=KEY")
                .help("send this claim of the caller's token to the gRPC server as metadata KEY, e.g. sub=x-user-id or scope=x-scopes; repeatable"),
        )))
        .arg(auth(
            Arg::new("auth-forward-token")
                .long("auth-forward-token")
                .action(ArgAction::SetTrue)
                .help("let --forward-header authorization pass the access token to the gRPC server (off: the MCP specification forbids token passthrough; prefer --forward-claim)"),
        ))
}

/// The settings, when `--auth-issuer` is given.
pub(crate) fn settings(
    matches: &ArgMatches,
    forward_headers: &[String],
) -> Result<Option<AuthSettings>, Error> {
    let Some(issuer) = matches.get_one::<String>("auth-issuer") else {
        return Ok(None);
    };
    let values = |id: &str| -> Vec<String> {
        matches
            .get_many::<String>(id)
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    };
    let forward_token = matches.get_flag("auth-forward-token");
    if !forward_token
        && forward_headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case("authorization"))
    {
        return Err(Error::new(
            "--forward-header authorization with --auth-issuer would forward nothing: the access \
             token is removed once checked. Forward who the caller is with --forward-claim, or \
             add --auth-forward-token to pass the token itself (the MCP specification forbids \
             token passthrough)",
        ));
    }
    let forward_claims = values("forward-claim")
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((claim, key)) if !claim.trim().is_empty() && !key.trim().is_empty() => {
                Ok((claim.trim().to_owned(), key.trim().to_ascii_lowercase()))
            }
            _ => Err(Error::new(format!(
                "--forward-claim {pair}: expects CLAIM=KEY, for example sub=x-user-id"
            ))),
        })
        .collect::<Result<_, _>>()?;
    let introspection = match matches.get_one::<String>("auth-introspection-client-id") {
        None => None,
        Some(client_id) => {
            let secret = std::env::var(INTROSPECTION_SECRET_ENV).map_err(|_| {
                Error::new(format!(
                    "--auth-introspection-client-id: the environment variable \
                     {INTROSPECTION_SECRET_ENV} must hold the client's secret"
                ))
            })?;
            Some((client_id.clone(), secret))
        }
    };
    Ok(Some(AuthSettings {
        issuer: issuer.clone(),
        resource_url: matches.get_one::<String>("resource-url").cloned(),
        audiences: values("auth-audience"),
        scopes: values("auth-scope"),
        read_scopes: values("auth-read-scope"),
        write_scopes: values("auth-write-scope"),
        jwks_uri: matches.get_one::<String>("auth-jwks-uri").cloned(),
        introspection,
        forward_claims,
        forward_token,
    }))
}
