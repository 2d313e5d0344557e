//! Tool names, titles, property keys and RPC selection globs: the naming rules shared by the
//! plugin and by tool sets built at run time.

/// The longest tool name MCP hosts accept.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The longest property key Anthropic and Bedrock accept (`^[a-zA-Z0-9_.-]{1,64}$`).
pub const MAX_PROPERTY_KEY: usize = 64;

/// Whether `key` is a property key every host accepts: `^[a-zA-Z0-9_.-]{1,64}$` (Anthropic and
/// Bedrock reject others).
pub fn is_portable_property_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_PROPERTY_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Why `name` is not a valid tool name, if it is not.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "`{name}` contains `{c}`; tool names use only A-Z, a-z, 0-9 and `_`"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("`{name}` must start with a letter"));
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "`{name}` is {} characters; tool names are at most {MAX_TOOL_NAME_LEN}",
            name.len()
        ));
    }
    Ok(())
}

/// Why `prefix` is not a valid tool-name prefix, if it is not.
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    check_tool_name(prefix)
        .map_err(|reason| format!("invalid tool-name prefix: {reason}"))
        .and_then(|()| {
            if prefix.len() >= MAX_TOOL_NAME_LEN {
                Err(format!(
                    "prefix `{prefix}` leaves no room for the tool name within {MAX_TOOL_NAME_LEN} characters"
                ))
            } else {
                Ok(())
            }
        })
}

/// `prefix_name`, or `name` without a prefix.
pub fn with_prefix(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(prefix) if prefix.ends_with('_') => format!("{prefix}{name}"),
        Some(prefix) => format!("{prefix}_{name}"),
        None => name.to_owned(),
    }
}

/// Shortens a tool name that is longer than [`MAX_TOOL_NAME_LEN`], deterministically.
///
/// The result is the longest tail of `name` that starts at a word boundary with a letter,
/// followed by `_` and eight hex digits of a hash of the whole name. Two long names that share a
/// tail still differ by their hash. Names within the limit are returned unchanged.
pub fn shorten_tool_name(name: &str) -> String {
    shorten(name, MAX_TOOL_NAME_LEN)
}

/// Shortens `name` to at most `max` bytes, the rule of [`shorten_tool_name`] and
/// [`property_alias`]: the longest tail that starts at a word boundary with a letter, `_`, then
/// eight hex digits of [`fnv1a`] of the whole name. Names within `max` are returned unchanged.
pub fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let hash = format!("{:08x}", fnv1a(name.as_bytes()) as u32);
    let budget = max.saturating_sub(hash.len() + 1);
    let bytes = name.as_bytes();
    let boundary = |i: usize| {
        let c = bytes[i];
        c.is_ascii_alphabetic()
            && (i == 0
                || bytes[i - 1] == b'_'
                || (c.is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase())
                || (c.is_ascii_uppercase()
                    && bytes[i - 1].is_ascii_uppercase()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase)))
    };
    let tail = name.len() - budget..name.len();
    let start = tail
        .clone()
        .find(|&i| name.is_char_boundary(i) && boundary(i))
        // No word boundary in reach: cut at the first letter that fits.
        .or_else(|| tail.clone().find(|&i| bytes[i].is_ascii_alphabetic()));
    match start {
        Some(start) => format!("{}_{hash}", &name[start..]),
        None => format!("t{hash}"),
    }
}

/// The property key of a field or oneof named `name` (proto name, or JSON name in `json_names`
/// mode) whose JSON name is `json_name`: `name` when it is a portable key
/// ([`is_portable_property_key`]), else `json_name` when that is, else [`property_alias`] of
/// `name`.
///
/// The plugin writes schemas with these keys and the runtime reads and writes arguments and
/// results with the same function, so the two cannot disagree.
pub fn property_key<'a>(name: &'a str, json_name: &'a str) -> std::borrow::Cow<'a, str> {
    if is_portable_property_key(name) {
        std::borrow::Cow::Borrowed(name)
    } else if is_portable_property_key(json_name) {
        std::borrow::Cow::Borrowed(json_name)
    } else {
        std::borrow::Cow::Owned(property_alias(name))
    }
}

/// A deterministic portable alias for a property name longer than [`MAX_PROPERTY_KEY`]: the rule
/// of tool names ([`shorten`]), a tail at a word boundary, `_`, then eight hex digits of a hash of
/// the whole name.
///
/// `upgrade_smart_shopping_campaign_to_performance_max_recommendation` (65 characters) becomes
/// `smart_shopping_campaign_to_performance_max_recommendation_` followed by the hash. Proto
/// identifiers only use `[A-Za-z0-9_]`, so length is the only thing to fix; any other
/// character is replaced with `_` all the same.
pub fn property_alias(name: &str) -> String {
    let alias = shorten(name, MAX_PROPERTY_KEY);
    if is_portable_property_key(&alias) {
        return alias;
    }
    let clean: String = alias
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if is_portable_property_key(&clean) {
        clean
    } else {
        format!("p{:08x}", fnv1a(name.as_bytes()) as u32)
    }
}

/// FNV-1a, 64 bit: a stable hash (the standard library's is not stable across releases).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A method name in words, keeping acronyms: `GetHTTPThing` → `Get HTTP Thing`.
pub fn title_words(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            continue;
        }
        if i > 0 && !out.is_empty() && !out.ends_with(' ') {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            let starts_word = (c.is_uppercase() && (prev.is_lowercase() || prev.is_ascii_digit()))
                || (c.is_uppercase()
                    && prev.is_uppercase()
                    && next.is_some_and(char::is_lowercase));
            if starts_word {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

/// Matches `text` against a glob where `*` stands for any run of characters.
pub fn glob_match(glob: &str, text: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == text;
    }
    let (first, rest) = (parts[0], &parts[1..]);
    let Some(mut remaining) = text.strip_prefix(first) else {
        return false;
    };
    let (last, middle) = rest.split_last().unwrap_or((&"", &[]));
    for part in middle {
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

/// Whether `name` is a proto identifier: ASCII letters, digits and `_`, not starting with a
/// digit, and at least one letter or digit (so that it has a Rust spelling).
pub fn is_proto_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.chars().any(|c| c.is_ascii_alphanumeric())
}

/// `/package.Service/Method` → `("package.Service", "Method")`; `None` for a path of
/// another shape.
pub fn split_rpc_path(path: &str) -> Option<(&str, &str)> {
    path.strip_prefix('/')?.split_once('/')
}

/// The package of the service (or message) `full_name`: what precedes its last dot.
pub fn package_of(full_name: &str) -> &str {
    full_name
        .rsplit_once('.')
        .map_or("", |(package, _)| package)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_keep_acronyms() {
        let cases = [
            ("GetItem", "Get Item"),
            ("GetHTTPThing", "Get HTTP Thing"),
            ("XMLHttpRequest", "XML Http Request"),
            ("List", "List"),
            ("get_item", "get item"),
            ("V2Search", "V2 Search"),
            ("SearchV2", "Search V2"),
            ("Base64Encode", "Base64 Encode"),
        ];
        for (input, expected) in cases {
            assert_eq!(title_words(input), expected, "{input}");
        }
    }

    #[test]
    fn tool_name_rules() {
        assert!(check_tool_name("ItemService_GetItem").is_ok());
        assert!(check_tool_name(&"a".repeat(64)).is_ok());
        let cases = [
            ("", "empty"),
            ("1bad", "start with a letter"),
            ("_x", "start with a letter"),
            ("bad-name", "contains `-`"),
            ("bad.name", "contains `.`"),
        ];
        for (input, expected) in cases {
            let err = check_tool_name(input).unwrap_err();
            assert!(err.contains(expected), "{input}: {err}");
        }
        let long = "a".repeat(65);
        assert!(check_tool_name(&long).unwrap_err().contains("at most 64"));
    }

    #[test]
    fn shortening_is_deterministic_bounded_and_distinct() {
        let a = "VeryLongServiceNameForTestingPurposesService_GetTheFirstExtremelyLongMethodName";
        let b = "VeryLongServiceNameForTestingPurposesService_GetTheSecondExtremelyLongMethodName";
        let (sa, sb) = (shorten_tool_name(a), shorten_tool_name(b));
        for s in [&sa, &sb] {
            check_tool_name(s).unwrap();
            assert!(s.len() <= MAX_TOOL_NAME_LEN);
        }
        assert_ne!(sa, sb);
        assert_eq!(sa, shorten_tool_name(a));
        // The tail is kept from a word boundary.
        assert!(
            sa.starts_with("PurposesService_GetTheFirstExtremelyLongMethodName_"),
            "{sa}"
        );
        assert_eq!(shorten_tool_name("Short_Name"), "Short_Name");
        // No word boundary at all: still valid.
        let flat = format!("A{}", "a".repeat(100));
        check_tool_name(&shorten_tool_name(&flat)).unwrap();
        let digits = format!("A{}", "1".repeat(100));
        check_tool_name(&shorten_tool_name(&digits)).unwrap();
    }

    #[test]
    fn property_keys_fall_back_to_json_name_then_alias() {
        assert_eq!(property_key("page_size", "pageSize"), "page_size");
        // 65 characters with underscores: the JSON name is shorter and fits.
        let long = "upgrade_smart_shopping_campaign_to_performance_max_recommendation";
        assert_eq!(long.len(), 65);
        assert_eq!(
            property_key(
                long,
                "upgradeSmartShoppingCampaignToPerformanceMaxRecommendation"
            ),
            "upgradeSmartShoppingCampaignToPerformanceMaxRecommendation"
        );
        // Neither fits: the alias, a tail at a word boundary and a hash.
        let longer = format!("{long}_and_its_rollout_input_resource");
        let json = "x".repeat(70);
        let key = property_key(&longer, &json);
        assert!(is_portable_property_key(&key), "{key}");
        assert_eq!(key, property_alias(&longer));
        assert!(
            key.starts_with("max_recommendation_and_its_rollout_input_resource_"),
            "{key}"
        );
        assert_eq!(
            key.len(),
            "max_recommendation_and_its_rollout_input_resource_".len() + 8
        );
        // Deterministic, and distinct for names sharing the tail.
        assert_eq!(property_alias(&longer), property_alias(&longer));
        assert_ne!(
            property_alias(&longer),
            property_alias(&format!("x{longer}"))
        );
    }

    #[test]
    fn rpc_paths_and_packages() {
        assert_eq!(
            split_rpc_path("/demo.v1.ItemService/GetItem"),
            Some(("demo.v1.ItemService", "GetItem"))
        );
        assert_eq!(split_rpc_path("demo.v1.ItemService/GetItem"), None);
        assert_eq!(split_rpc_path("/demo.v1.ItemService"), None);
        assert_eq!(package_of("demo.v1.ItemService"), "demo.v1");
        assert_eq!(package_of("ItemService"), "");
    }

    #[test]
    fn globs() {
        let cases = [
            ("demo.v1.*", "demo.v1.ItemService.GetItem", true),
            ("*.GetItem", "demo.v1.ItemService.GetItem", true),
            ("*Item*", "demo.v1.ItemService.GetItem", true),
            ("demo.*.Get*", "demo.v1.ItemService.GetItem", true),
            (
                "demo.v1.ItemService.GetItem",
                "demo.v1.ItemService.GetItem",
                true,
            ),
            ("demo.v2.*", "demo.v1.ItemService.GetItem", false),
            ("*.Delete*", "demo.v1.ItemService.GetItem", false),
            ("a*a", "a", false),
        ];
        for (glob, text, expected) in cases {
            assert_eq!(glob_match(glob, text), expected, "{glob} {text}");
        }
    }

    #[test]
    fn prefixes() {
        assert_eq!(with_prefix(Some("shop"), "Get"), "shop_Get");
        assert_eq!(with_prefix(Some("shop_"), "Get"), "shop_Get");
        assert_eq!(with_prefix(None, "Get"), "Get");
        assert!(check_prefix("shop").is_ok());
        assert!(check_prefix("9lives").unwrap_err().contains("letter"));
    }
}
