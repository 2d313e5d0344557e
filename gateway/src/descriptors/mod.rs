//! Descriptors of the target's services, from gRPC server reflection or from a descriptor-set
//! file.
//!
//! Reflection asks the server for its services (`list_services`), then for the file defining
//! each selected service (`file_containing_symbol`), then for every import not received yet
//! (`file_by_filename`), round by round until the closure is complete. Files travel as the
//! encoded `FileDescriptorProto` the server holds, so custom options (`google.api.*`,
//! `rust_mcp.*`, `buf.validate`) reach the schema generator intact. gRPC reflection v1 is
//! tried first, v1alpha when the server does not implement v1.

use std::collections::BTreeMap;
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use prost::Message as _;
use prost_reflect::DescriptorPool;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_mcp::SetPools;
use tonic_mcp::schema::comments::Comments;
use tonic_mcp::schema::set_files::SetFiles;
use tonic_mcp::schema::source_info::SetError;

use crate::error::Error;
use crate::headers::Headers;
use crate::imports;

/// Services whose full name starts with one of these are infrastructure, not API: they are
/// left out unless named with `--service`.
pub const SKIPPED_BY_DEFAULT: &[&str] = &["grpc.reflection.", "grpc.health."];

/// Descriptors and the services found in them.
#[derive(Debug, Clone)]
pub struct Descriptors {
    /// Every file the services need, with its imports, without source info (see
    /// [`comments`](Self::comments)), kept as encoded files: each package's pool is built
    /// when its tools are made, and while its tools are called.
    pub set: Arc<SetPools>,
    /// The files' comments, indexed from their source info before the pool was built without
    /// it: source info is read only for descriptions, and it is most of a descriptor set with
    /// comments (three quarters of googleapis'), which a pool would hold twice.
    pub comments: Arc<Comments>,
    /// A hash of the encoded `FileDescriptorSet` they were built from: the same descriptors
    /// loaded again have the same fingerprint, and a reload keeps the tools it made of them.
    pub fingerprint: u64,
    /// Full names of the services: those the server listed (reflection) or those defined in
    /// the file (descriptor set), in that order.
    pub services: Vec<String>,
}

impl Descriptors {
    /// Reads an encoded `FileDescriptorSet` (`protoc --descriptor_set_out=FILE
    /// --include_imports`, `buf build -o FILE`).
    ///
    /// # Errors
    ///
    /// The file cannot be read, does not decode, or lacks imports.
    pub fn from_file(path: &Path) -> Result<Descriptors, Error> {
        Self::from_file_unless(path, None)?.ok_or_else(unchanged)
    }

    /// [`from_file`](Self::from_file), or `None` without decoding anything when the file
    /// holds the descriptors of fingerprint `known` (a reload of an unchanged file).
    ///
    /// # Errors
    ///
    /// As for [`from_file`](Self::from_file).
    pub fn from_file_unless(path: &Path, known: Option<u64>) -> Result<Option<Descriptors>, Error> {
        let shown = path.display();
        let cannot_read = |e| Error::new(format!("--descriptor-set {shown}: cannot read it ({e})"));
        // A reload compares the file with what it held as the file is read, a part at a
        // time: an unchanged file, the usual case, is never held whole.
        if let Some(known) = known {
            let mut streamed = Fingerprint::default();
            std::io::copy(
                &mut std::fs::File::open(path).map_err(cannot_read)?,
                &mut streamed,
            )
            .map_err(cannot_read)?;
            if streamed.finish(&[]) == known {
                return Ok(None);
            }
        }
        let bytes = std::fs::read(path).map_err(cannot_read)?;
        let fingerprint = fingerprint(&bytes, &[]);
        if known == Some(fingerprint) {
            return Ok(None);
        }
        let (set, comments) = set_and_comments(
            &bytes,
            |e| Error::new(format!("--descriptor-set {shown}: {e}")),
            |e| {
                Error::new(format!(
                    "--descriptor-set {shown}: not a complete FileDescriptorSet ({e}); write it \
                     with `protoc --include_imports --descriptor_set_out=FILE` or `buf build -o \
                     FILE`"
                ))
            },
        )?;
        let services = set.services().to_vec();
        Ok(Some(Descriptors {
            set: Arc::new(set),
            comments: Arc::new(comments),
            fingerprint,
            services,
        }))
    }

    /// The services to serve: those named (each must exist), or else every service except
    /// the [`SKIPPED_BY_DEFAULT`] ones.
    ///
    /// # Errors
    ///
    /// A named service is not in the descriptors; the message lists those that are.
    pub fn select(&self, named: &[String]) -> Result<Vec<String>, Error> {
        if named.is_empty() {
            return Ok(self
                .services
                .iter()
                .filter(|s| !skipped_by_default(s))
                .cloned()
                .collect());
        }
        for name in named {
            if !self.set.services().contains(name) {
                return Err(Error::new(format!(
                    "--service {name}: no such service; the target has {}",
                    self.services.join(", ")
                )));
            }
        }
        Ok(named.to_vec())
    }
}

fn skipped_by_default(service: &str) -> bool {
    SKIPPED_BY_DEFAULT.iter().any(|p| service.starts_with(p))
}

/// What the gateway asks a reflection server.
#[derive(Debug, Clone)]
enum Query {
    ListServices,
    FileByFilename(String),
    FileContainingSymbol(String),
}

/// What it answers.
#[derive(Debug)]
enum Answer {
    Services(Vec<String>),
    Files(Vec<Vec<u8>>),
    Error { code: i32, message: String },
}

/// The two protocol versions, whose messages have the same shape in different packages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V1Alpha,
}

/// The largest reflection response accepted (a file set of a very large API).
const MAX_RESPONSE_BYTES: usize = 64 << 20;

macro_rules! exchange {
    ($name:ident, $pb:path) => {
        /// Sends `queries` on one reflection stream and returns the answers in order.
        async fn $name(
            channel: Channel,
            headers: &Headers,
            timeout: Duration,
            queries: &[Query],
        ) -> Result<Vec<Answer>, Status> {
            use pb::server_reflection_request::MessageRequest;
            use pb::server_reflection_response::MessageResponse;
            use $pb as pb;
            let requests: Vec<pb::ServerReflectionRequest> = queries
                .iter()
                .map(|query| pb::ServerReflectionRequest {
                    host: String::new(),
                    message_request: Some(match query {
                        Query::ListServices => MessageRequest::ListServices(String::new()),
                        Query::FileByFilename(name) => MessageRequest::FileByFilename(name.clone()),
                        Query::FileContainingSymbol(symbol) => {
                            MessageRequest::FileContainingSymbol(symbol.clone())
                        }
                    }),
                })
                .collect();
            let mut request = tonic::Request::from_parts(
                headers.metadata(),
                tonic::Extensions::default(),
                tokio_stream::iter(requests),
            );
            request.set_timeout(timeout);
            let mut client = pb::server_reflection_client::ServerReflectionClient::new(channel)
                .max_decoding_message_size(MAX_RESPONSE_BYTES);
            let mut responses = client.server_reflection_info(request).await?.into_inner();
            let mut answers = Vec::with_capacity(queries.len());
            while answers.len() < queries.len() {
                let Some(response) = responses.message().await? else {
                    return Err(Status::internal(format!(
                        "the reflection stream ended after {} of {} answers",
                        answers.len(),
                        queries.len()
                    )));
                };
                answers.push(match response.message_response {
                    Some(MessageResponse::ListServicesResponse(list)) => {
                        Answer::Services(list.service.into_iter().map(|s| s.name).collect())
                    }
                    Some(MessageResponse::FileDescriptorResponse(files)) => {
                        Answer::Files(files.file_descriptor_proto)
                    }
                    Some(MessageResponse::ErrorResponse(error)) => Answer::Error {
                        code: error.error_code,
                        message: error.error_message,
                    },
                    Some(MessageResponse::AllExtensionNumbersResponse(_)) | None => Answer::Error {
                        code: Code::Internal as i32,
                        message: "an answer of the wrong kind".to_owned(),
                    },
                });
            }
            Ok(answers)
        }
    };
}

exchange!(exchange_v1, tonic_reflection::pb::v1);
exchange!(exchange_v1alpha, tonic_reflection::pb::v1alpha);

struct Reflection<'a> {
    channel: Channel,
    headers: &'a Headers,
    timeout: Duration,
    version: Version,
}

impl Reflection<'_> {
    async fn ask(&self, queries: &[Query]) -> Result<Vec<Answer>, Status> {
        let channel = self.channel.clone();
        match self.version {
            Version::V1 => exchange_v1(channel, self.headers, self.timeout, queries).await,
            Version::V1Alpha => {
                exchange_v1alpha(channel, self.headers, self.timeout, queries).await
            }
        }
    }
}

fn reflection_failed(status: &Status) -> Error {
    // A status tonic made from a transport failure says only "transport error"; the cause
    // (refused, a TLS alert) is in its source chain.
    let mut message = status.message().to_owned();
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    let lower = message.to_lowercase();
    let hint = match status.code() {
        Code::Unimplemented => {
            "; the server does not offer gRPC reflection: pass its descriptors with \
             --descriptor-set FILE"
        }
        _ if lower.contains("certificaterequired") || lower.contains("certificate required") => {
            "; the server requires a client certificate (mutual TLS): pass --tls-cert FILE \
             --tls-key FILE"
        }
        Code::Unavailable if status.message().contains("certificate") => {
            "; for a server certificate from a private CA pass --tls-ca FILE, for one issued \
             to another name --tls-server-name NAME"
        }
        Code::Unavailable => "; is the server running, and is the URL's scheme right?",
        _ => "",
    };
    Error::new(format!(
        "gRPC reflection failed: {:?}: {message}{hint}",
        status.code(),
    ))
}

/// Loads the descriptors of the target's services through gRPC server reflection.
///
/// `named` are the services to resolve (`--service`); when empty, every listed service except
/// the [`SKIPPED_BY_DEFAULT`] ones. Every request carries `headers`; each exchange is bounded
/// by `timeout`.
///
/// # Errors
///
/// The server cannot be reached, does not implement reflection, does not know a service or
/// an imported file, or sends descriptors that do not link.
pub async fn from_reflection(
    channel: Channel,
    headers: &Headers,
    timeout: Duration,
    named: &[String],
) -> Result<Descriptors, Error> {
    from_reflection_unless(channel, headers, timeout, named, None)
        .await?
        .ok_or_else(unchanged)
}

/// [`from_reflection`], or `None` without linking anything when the server sent the
/// descriptors of fingerprint `known` (a reload of an unchanged server).
///
/// # Errors
///
/// As for [`from_reflection`].
pub async fn from_reflection_unless(
    channel: Channel,
    headers: &Headers,
    timeout: Duration,
    named: &[String],
    known: Option<u64>,
) -> Result<Option<Descriptors>, Error> {
    let mut reflection = Reflection {
        channel,
        headers,
        timeout,
        version: Version::V1,
    };
    let listed = match reflection.ask(&[Query::ListServices]).await {
        Err(status) if status.code() == Code::Unimplemented => {
            tracing::debug!("reflection v1 is not implemented; trying v1alpha");
            reflection.version = Version::V1Alpha;
            reflection.ask(&[Query::ListServices]).await
        }
        other => other,
    }
    .map_err(|status| reflection_failed(&status))?;
    let listed = match listed.into_iter().next() {
        Some(Answer::Services(services)) => services,
        Some(Answer::Error { code, message }) => {
            return Err(Error::new(format!(
                "gRPC reflection refused to list services: {message} (code {code})"
            )));
        }
        _ => return Err(Error::new("gRPC reflection sent no service list")),
    };
    tracing::debug!(version = ?reflection.version, services = ?listed, "reflection listed services");
    let services: Vec<String> = if named.is_empty() {
        listed
            .iter()
            .filter(|s| !skipped_by_default(s))
            .cloned()
            .collect()
    } else {
        named.to_vec()
    };
    if services.is_empty() {
        return Err(no_api_services(&listed));
    }

    // Round one: the file of each service; then the imports still missing, round by round.
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut imports: BTreeMap<String, String> = BTreeMap::new(); // import -> importer
    let queries: Vec<Query> = services
        .iter()
        .map(|s| Query::FileContainingSymbol(s.clone()))
        .collect();
    let answers = reflection
        .ask(&queries)
        .await
        .map_err(|status| reflection_failed(&status))?;
    for (service, answer) in services.iter().zip(answers) {
        match answer {
            Answer::Files(received) => add_files(&mut files, &mut imports, received)?,
            Answer::Error { message, .. } => {
                return Err(Error::new(format!(
                    "gRPC reflection does not know the service {service}: {message}"
                )));
            }
            Answer::Services(_) => {
                return Err(Error::new("gRPC reflection answered with the wrong kind"));
            }
        }
    }
    loop {
        let missing: Vec<(String, String)> = imports
            .iter()
            .filter(|(name, _)| !files.contains_key(*name))
            .map(|(name, importer)| (name.clone(), importer.clone()))
            .collect();
        if missing.is_empty() {
            break;
        }
        let queries: Vec<Query> = missing
            .iter()
            .map(|(name, _)| Query::FileByFilename(name.clone()))
            .collect();
        let answers = reflection
            .ask(&queries)
            .await
            .map_err(|status| reflection_failed(&status))?;
        for ((name, importer), answer) in missing.into_iter().zip(answers) {
            match answer {
                Answer::Files(received) => add_files(&mut files, &mut imports, received)?,
                Answer::Error { message, .. } => match well_known_file(&name) {
                    // Some servers register only their own files; the well-known types are
                    // the same everywhere.
                    Some(bytes) => add_files(&mut files, &mut imports, vec![bytes])?,
                    None => {
                        return Err(Error::new(format!(
                            "gRPC reflection does not know {name}, imported by {importer}: \
                             {message}; pass the descriptors with --descriptor-set FILE"
                        )));
                    }
                },
                Answer::Services(_) => {
                    return Err(Error::new("gRPC reflection answered with the wrong kind"));
                }
            }
            // A server that answers with other files than the one asked would loop forever.
            if !files.contains_key(&name) {
                return Err(Error::new(format!(
                    "gRPC reflection did not send {name} when asked for it"
                )));
            }
        }
    }
    tracing::debug!(files = files.len(), "reflection sent every file");
    let set = link_set(files.into_values());
    let fingerprint = fingerprint(&set, &services);
    if known == Some(fingerprint) {
        return Ok(None);
    }
    let (set, comments) = link(&set)?;
    Ok(Some(Descriptors {
        set: Arc::new(set),
        comments: Arc::new(comments),
        fingerprint,
        services,
    }))
}

/// The error of an `…_unless` function that found the descriptors unchanged when it was not
/// given a fingerprint to compare with: it cannot happen.
fn unchanged() -> Error {
    Error::new(
        "the descriptors were found unchanged without a fingerprint to compare; this is a bug",
    )
}

/// The [`fingerprint`](Descriptors::fingerprint) of the encoded `FileDescriptorSet` `set` and
/// the services a server listed with it.
fn fingerprint(set: &[u8], services: &[String]) -> u64 {
    let mut fingerprint = Fingerprint::default();
    fingerprint.0.write(set);
    fingerprint.finish(services)
}

/// A [`fingerprint`] taken of a set written to it a part at a time: the hasher reads its
/// input as one stream, so the parts give what the whole set gives.
#[derive(Default)]
struct Fingerprint(std::hash::DefaultHasher);

impl Fingerprint {
    fn finish(mut self, services: &[String]) -> u64 {
        services.hash(&mut self.0);
        self.0.finish()
    }
}

impl std::io::Write for Fingerprint {
    fn write(&mut self, part: &[u8]) -> std::io::Result<usize> {
        self.0.write(part);
        Ok(part.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Records received files and their imports; a file sent twice keeps its first copy.
fn add_files(
    files: &mut BTreeMap<String, Vec<u8>>,
    imports: &mut BTreeMap<String, String>,
    received: Vec<Vec<u8>>,
) -> Result<(), Error> {
    for bytes in received {
        let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).map_err(|e| {
            Error::new(format!(
                "gRPC reflection sent a file descriptor that does not decode: {e}"
            ))
        })?;
        let name = file.name().to_owned();
        for import in file.dependency {
            imports.entry(import).or_insert_with(|| name.clone());
        }
        files.entry(name).or_insert(bytes);
    }
    Ok(())
}

/// The error for a server that lists only infrastructure services (reflection, health): the
/// exact flags that serve them anyway, to copy.
fn no_api_services(listed: &[String]) -> Error {
    let served: Vec<&String> = listed
        .iter()
        .filter(|s| !s.starts_with("grpc.reflection."))
        .collect();
    if served.is_empty() {
        return Error::new(
            "the server lists no services besides gRPC reflection; it has no RPCs to serve as tools",
        );
    }
    let flags: Vec<String> = served.iter().map(|s| format!("--service {s}")).collect();
    Error::new(format!(
        "the server lists only {}, which are left out by default; to serve them anyway, add {}",
        served
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        flags.join(" ")
    ))
}

/// A `google/protobuf/*.proto` file from prost-reflect's built-in copy.
fn well_known_file(name: &str) -> Option<Vec<u8>> {
    if !name.starts_with("google/protobuf/") {
        return None;
    }
    let file = DescriptorPool::global().get_file_by_name(name)?;
    Some(file.file_descriptor_proto().encode_to_vec())
}

/// Encoded file descriptors, in any order, as one encoded `FileDescriptorSet`; imports a file
/// uses without declaring them are added first (see [`imports`]).
fn link_set(files: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut files: Vec<Vec<u8>> = files.into_iter().collect();
    let added = imports::add_undeclared(&mut files);
    if !added.is_empty() {
        tracing::warn!(
            imports = ?added,
            "gRPC reflection sent files that use types of other files without importing them \
             (as @grpc/reflection does); linked them across every file the server sent"
        );
    }
    // An encoded FileDescriptorSet is its files as field 1, length-delimited.
    let mut set = Vec::new();
    for bytes in &files {
        prost::encoding::bytes::encode(1, bytes, &mut set);
    }
    set
}

/// Links the files of the encoded `FileDescriptorSet` `set` (from [`link_set`]), every package's
/// pool once (a server's files are few), keeping their custom options.
fn link(set: &[u8]) -> Result<(SetPools, Comments), Error> {
    let link_error = |e: String| {
        Error::new(format!(
            "the descriptors from gRPC reflection do not link: {e}; a type the server uses \
             is in none of the files it sent: pass complete descriptors with --descriptor-set \
             FILE (protoc --include_imports --descriptor_set_out=FILE, or buf build -o FILE)"
        ))
    };
    let (set, comments) = set_and_comments(
        set,
        |e| Error::new(format!("gRPC reflection answered {e}")),
        link_error,
    )?;
    set.files().check().map_err(link_error)?;
    Ok((set, comments))
}

/// The files of the encoded `FileDescriptorSet` `bytes`, without their source info, and the
/// comments indexed from that source info first (see [`Descriptors::comments`]), with an
/// editions file worded by `syntax_error` and a set that does not decode, or lacks an import,
/// by `link_error`. Each package's files are linked when its pool is first built.
fn set_and_comments(
    bytes: &[u8],
    syntax_error: impl Fn(String) -> Error,
    link_error: impl Fn(String) -> Error,
) -> Result<(SetPools, Comments), Error> {
    match SetFiles::decode(bytes) {
        Ok((files, comments)) => Ok((SetPools::new(files), comments)),
        Err(SetError::Syntax(message)) => Err(syntax_error(message)),
        Err(SetError::Link(message)) => Err(link_error(message)),
    }
}

#[cfg(test)]
mod tests;
