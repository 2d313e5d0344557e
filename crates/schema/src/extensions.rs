//! Custom options read from the request's descriptors: `google.api.field_behavior`,
//! `buf.validate`, and our own `rust_mcp` options (`proto/rust_mcp/options.proto`).
//!
//! prost-types drops unknown fields, and with them every extension option, so options are read
//! from a prost-reflect `DescriptorPool` built from the raw request bytes. An extension that no
//! file in the request declares is simply absent: nothing can set it.

use foldhash::HashMap;
use std::cell::RefCell;

use prost_reflect::{
    DescriptorPool, DynamicMessage, ExtensionDescriptor, FieldDescriptor, MethodDescriptor,
    OneofDescriptor, ReflectMessage, ServiceDescriptor, Value,
};

/// `google.api.FieldBehavior` numbers (google/api/field_behavior.proto).
mod field_behavior {
    pub(super) const REQUIRED: i32 = 2;
    pub(super) const OUTPUT_ONLY: i32 = 3;
    pub(super) const INPUT_ONLY: i32 = 4;
}

/// `buf.validate.Ignore.IGNORE_ALWAYS` (buf/validate/validate.proto).
const IGNORE_ALWAYS: i32 = 3;
/// `buf.validate.Ignore.IGNORE_IF_ZERO_VALUE`.
const IGNORE_IF_ZERO_VALUE: i32 = 1;

/// The extension descriptors, looked up once per request.
#[derive(Debug, Default, Clone)]
pub struct Extensions {
    field_behavior: Option<ExtensionDescriptor>,
    validate_field: Option<ExtensionDescriptor>,
    validate_oneof: Option<ExtensionDescriptor>,
    tool: Option<ExtensionDescriptor>,
    service: Option<ExtensionDescriptor>,
    field: Option<ExtensionDescriptor>,
    operation_info: Option<ExtensionDescriptor>,
    /// Field facts by full field name: decoding options is the costly part of reading them, and
    /// every schema that reaches a message reads all of its fields.
    facts: RefCell<HashMap<String, FieldFacts>>,
}

/// What the options of one field say.
#[derive(Debug, Clone, Default)]
pub struct FieldFacts {
    /// `(google.api.field_behavior) = REQUIRED`.
    pub behavior_required: bool,
    /// `(buf.validate.field).required`.
    pub validate_required: bool,
    /// `OUTPUT_ONLY`: left out of input schemas.
    pub output_only: bool,
    /// `INPUT_ONLY`: left out of output schemas.
    pub input_only: bool,
    /// `(rust_mcp.field).hidden`.
    pub hidden: bool,
    /// `[deprecated = true]`.
    pub deprecated: bool,
    /// The `buf.validate.FieldRules`, unless they are ignored always.
    pub rules: Option<DynamicMessage>,
    /// `ignore = IGNORE_IF_ZERO_VALUE`: the zero value must stay valid.
    pub ignore_if_zero: bool,
}

/// The `(rust_mcp.tool)` option of a method.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOptions {
    /// Whether the option is present at all (for `opt_in`).
    pub present: bool,
    /// Tool-name override.
    pub name: Option<String>,
    /// Title override.
    pub title: Option<String>,
    /// Description override.
    pub description: Option<String>,
    /// Not exposed as a tool.
    pub skip: bool,
    /// `readOnlyHint`.
    pub read_only: Option<bool>,
    /// `destructiveHint`.
    pub destructive: Option<bool>,
    /// `idempotentHint`.
    pub idempotent: Option<bool>,
    /// `openWorldHint`.
    pub open_world: Option<bool>,
    /// Per-tool deadline as (seconds, nanos).
    pub timeout: Option<(i64, i32)>,
    /// Server-streaming collection bound.
    pub max_messages: Option<u32>,
    /// The tool's result budget in bytes of JSON.
    pub max_result_bytes: Option<u32>,
    /// Free-text category, listed in `_meta`.
    pub category: Option<String>,
    /// OAuth scopes a call needs, listed in `_meta` as `requiredScopes`.
    pub required_scopes: Vec<String>,
    /// `task_support`, as its enum number (0 when unset).
    pub task_support: Option<i32>,
    /// Ask the user before calling.
    pub confirm: bool,
    /// `unconfirmed`, as its enum number.
    pub unconfirmed: Option<i32>,
    /// `long_running`, as its enum number.
    pub long_running: Option<i32>,
}

/// The `(google.longrunning.operation_info)` option of a method returning
/// `google.longrunning.Operation`: the types its `response` and `metadata` hold, as written
/// (possibly relative to the method's package).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationInfo {
    /// `response_type`.
    pub response_type: String,
    /// `metadata_type`.
    pub metadata_type: String,
}

/// The `(rust_mcp.service)` option of a service.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceOptions {
    /// No tools for this service.
    pub skip: bool,
    /// Tool-name prefix for this service.
    pub prefix: Option<String>,
}

impl Extensions {
    /// Looks the extensions up in the pool.
    pub fn new(pool: &DescriptorPool) -> Extensions {
        let get = |name: &str| pool.get_extension_by_name(name);
        Extensions {
            field_behavior: get("google.api.field_behavior"),
            validate_field: get("buf.validate.field"),
            validate_oneof: get("buf.validate.oneof"),
            tool: get("rust_mcp.tool"),
            service: get("rust_mcp.service"),
            field: get("rust_mcp.field"),
            operation_info: get("google.longrunning.operation_info"),
            facts: RefCell::default(),
        }
    }

    /// Reads everything the options of `field` say (once per field).
    pub fn field(&self, field: &FieldDescriptor) -> FieldFacts {
        if let Some(facts) = self.facts.borrow().get(field.full_name()) {
            return facts.clone();
        }
        let facts = self.read_field(field);
        self.facts
            .borrow_mut()
            .insert(field.full_name().to_owned(), facts.clone());
        facts
    }

    fn read_field(&self, field: &FieldDescriptor) -> FieldFacts {
        let options = field.options();
        let mut facts = FieldFacts {
            deprecated: field
                .field_descriptor_proto()
                .options
                .as_ref()
                .is_some_and(|o| o.deprecated()),
            ..FieldFacts::default()
        };
        if let Some(Value::List(behaviors)) = extension(&options, self.field_behavior.as_ref()) {
            for behavior in behaviors {
                match behavior.as_enum_number() {
                    Some(field_behavior::REQUIRED) => facts.behavior_required = true,
                    Some(field_behavior::OUTPUT_ONLY) => facts.output_only = true,
                    Some(field_behavior::INPUT_ONLY) => facts.input_only = true,
                    _ => {}
                }
            }
        }
        if let Some(Value::Message(rules)) = extension(&options, self.validate_field.as_ref()) {
            let ignore = get_i32(&rules, "ignore").unwrap_or(0);
            facts.validate_required = get_bool(&rules, "required").unwrap_or(false);
            facts.ignore_if_zero = ignore == IGNORE_IF_ZERO_VALUE;
            if ignore != IGNORE_ALWAYS {
                facts.rules = Some(rules);
            }
        }
        if let Some(Value::Message(ours)) = extension(&options, self.field.as_ref()) {
            facts.hidden = get_bool(&ours, "hidden").unwrap_or(false);
        }
        facts
    }

    /// `(buf.validate.oneof).required`.
    pub fn oneof_required(&self, oneof: &OneofDescriptor) -> bool {
        match extension(&oneof.options(), self.validate_oneof.as_ref()) {
            Some(Value::Message(rules)) => get_bool(&rules, "required").unwrap_or(false),
            _ => false,
        }
    }

    /// The `(rust_mcp.tool)` option of `method`.
    pub fn tool(&self, method: &MethodDescriptor) -> ToolOptions {
        let Some(Value::Message(o)) = extension(&method.options(), self.tool.as_ref()) else {
            return ToolOptions::default();
        };
        let timeout = present(&o, "timeout").and_then(|value| {
            value.as_message().map(|duration| {
                (
                    get_i64(duration, "seconds").unwrap_or(0),
                    get_i32(duration, "nanos").unwrap_or(0),
                )
            })
        });
        ToolOptions {
            present: true,
            name: get_string(&o, "name"),
            title: get_string(&o, "title"),
            description: get_string(&o, "description"),
            skip: get_bool(&o, "skip").unwrap_or(false),
            read_only: get_bool(&o, "read_only"),
            destructive: get_bool(&o, "destructive"),
            idempotent: get_bool(&o, "idempotent"),
            open_world: get_bool(&o, "open_world"),
            timeout,
            max_messages: get_u32(&o, "max_messages"),
            max_result_bytes: get_u32(&o, "max_result_bytes"),
            category: get_string(&o, "category"),
            task_support: get_i32(&o, "task_support"),
            confirm: get_bool(&o, "confirm").unwrap_or(false),
            unconfirmed: get_i32(&o, "unconfirmed"),
            long_running: get_i32(&o, "long_running"),
            required_scopes: get_strings(&o, "required_scopes"),
        }
    }

    /// The `(google.longrunning.operation_info)` option of `method`, when set.
    pub fn operation_info(&self, method: &MethodDescriptor) -> Option<OperationInfo> {
        let Some(Value::Message(info)) = extension(&method.options(), self.operation_info.as_ref())
        else {
            return None;
        };
        Some(OperationInfo {
            response_type: get_string(&info, "response_type").unwrap_or_default(),
            metadata_type: get_string(&info, "metadata_type").unwrap_or_default(),
        })
    }

    /// The `(rust_mcp.service)` option of `service`.
    pub fn service(&self, service: &ServiceDescriptor) -> ServiceOptions {
        match extension(&service.options(), self.service.as_ref()) {
            Some(Value::Message(o)) => ServiceOptions {
                skip: get_bool(&o, "skip").unwrap_or(false),
                prefix: get_string(&o, "prefix"),
            },
            _ => ServiceOptions::default(),
        }
    }
}

/// The value of an extension set on `options`, if the extension is known and set.
fn extension(options: &DynamicMessage, ext: Option<&ExtensionDescriptor>) -> Option<Value> {
    let ext = ext?;
    // A pool can hold an extension of another `*Options` message under the same name only if the
    // input is inconsistent; checking the extendee keeps `get_extension` from panicking.
    if ext.containing_message().full_name() != options.descriptor().full_name() {
        return None;
    }
    options
        .has_extension(ext)
        .then(|| options.get_extension(ext).into_owned())
}

fn present(message: &DynamicMessage, name: &str) -> Option<Value> {
    let field = message.descriptor().get_field_by_name(name)?;
    message
        .has_field(&field)
        .then(|| message.get_field(&field).into_owned())
}

/// A present bool field.
pub fn get_bool(message: &DynamicMessage, name: &str) -> Option<bool> {
    present(message, name)?.as_bool()
}

/// A present string field.
pub fn get_string(message: &DynamicMessage, name: &str) -> Option<String> {
    present(message, name)?.as_str().map(str::to_owned)
}

/// A repeated string field (empty when absent).
pub fn get_strings(message: &DynamicMessage, name: &str) -> Vec<String> {
    match present(message, name) {
        Some(Value::List(values)) => values
            .iter()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// A present 32-bit integer or enum field.
pub fn get_i32(message: &DynamicMessage, name: &str) -> Option<i32> {
    let value = present(message, name)?;
    value.as_i32().or_else(|| value.as_enum_number())
}

/// A present uint32 field.
pub fn get_u32(message: &DynamicMessage, name: &str) -> Option<u32> {
    present(message, name)?.as_u32()
}

/// A present int64 field.
pub fn get_i64(message: &DynamicMessage, name: &str) -> Option<i64> {
    present(message, name)?.as_i64()
}
