//! The message graph of one tool schema: which messages go into `$defs`.
//!
//! Nodes are the messages reachable from the root through fields visible on this side (hidden,
//! `OUTPUT_ONLY`/`INPUT_ONLY` fields and well-known types are not followed). Each field that
//! references a message is one edge, counted once per referencing message: a message in `$defs`
//! is written once, so its own references count once too. A message goes into `$defs` when it
//! has two or more incoming edges or belongs to a cycle (a strongly connected component with more
//! than one node, or a self-edge). The root of a unary schema never does: it is referenced as `#`.

use std::collections::BTreeMap;

use foldhash::HashMap;

use prost_reflect::{EnumDescriptor, Kind, MessageDescriptor};

use super::{Direction, SchemaContext, is_visible, wkt};

#[derive(Debug)]
pub(super) struct MessageGraph {
    defs: Vec<MessageDescriptor>,
    /// How many visible fields of the reachable messages hold each enum (by full name).
    enum_uses: HashMap<String, usize>,
}

impl MessageGraph {
    /// Builds the graph from `start`. When `root_is_node` is false (streams, well-known roots),
    /// `start` is referenced from a synthetic root and may itself go into `$defs`.
    pub(super) fn build(
        cx: SchemaContext<'_>,
        start: &MessageDescriptor,
        direction: Direction,
        root_is_node: bool,
    ) -> MessageGraph {
        let mut nodes: BTreeMap<String, MessageDescriptor> = BTreeMap::new();
        let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut incoming: HashMap<String, usize> = HashMap::default();
        let mut queue = Vec::new();
        let mut enum_uses: HashMap<String, usize> = HashMap::default();
        if !wkt::is_well_known(start) {
            if !root_is_node {
                *incoming.entry(start.full_name().to_owned()).or_default() += 1;
            }
            nodes.insert(start.full_name().to_owned(), start.clone());
            queue.push(start.clone());
        }
        while let Some(message) = queue.pop() {
            let mut out = Vec::new();
            for field in message.fields() {
                if !is_visible(&cx.extensions.field(&field), direction) {
                    continue;
                }
                if let Some(e) = referenced_enum(&field.kind(), field.is_map()) {
                    *enum_uses.entry(e.full_name().to_owned()).or_default() += 1;
                }
                let Some(target) = referenced_message(&field.kind(), field.is_map()) else {
                    continue;
                };
                *incoming.entry(target.full_name().to_owned()).or_default() += 1;
                out.push(target.full_name().to_owned());
                if !nodes.contains_key(target.full_name()) {
                    nodes.insert(target.full_name().to_owned(), target.clone());
                    queue.push(target);
                }
            }
            edges.insert(message.full_name().to_owned(), out);
        }
        let cyclic = cyclic_nodes(&nodes, &edges);
        let root_name = root_is_node.then(|| start.full_name().to_owned());
        let defs = nodes
            .iter()
            .filter(|(name, _)| Some(*name) != root_name.as_ref())
            .filter(|(name, _)| {
                incoming.get(*name).copied().unwrap_or(0) >= 2 || cyclic.contains_key(*name)
            })
            .map(|(_, message)| message.clone())
            .collect();
        MessageGraph { defs, enum_uses }
    }

    /// How many visible fields of the reachable messages hold `e` (each message counted once,
    /// as it is written once).
    pub(super) fn enum_uses(&self, e: &EnumDescriptor) -> usize {
        self.enum_uses.get(e.full_name()).copied().unwrap_or(0)
    }

    /// The messages that go into `$defs`, sorted by full name.
    pub(super) fn defs(&self) -> &[MessageDescriptor] {
        &self.defs
    }

    pub(super) fn is_def(&self, message: &MessageDescriptor) -> bool {
        self.is_def_name(message.full_name())
    }

    /// Whether the message named `full_name` goes into `$defs`.
    pub(super) fn is_def_name(&self, full_name: &str) -> bool {
        self.defs.iter().any(|d| d.full_name() == full_name)
    }
}

/// The enum a field holds (the value type for maps).
fn referenced_enum(kind: &Kind, is_map: bool) -> Option<EnumDescriptor> {
    match kind {
        Kind::Enum(e) => Some(e.clone()),
        Kind::Message(entry) if is_map => match entry.map_entry_value_field().kind() {
            Kind::Enum(e) => Some(e),
            _ => None,
        },
        _ => None,
    }
}

/// The message a field points at (the value type for maps), unless it is a well-known type with
/// a fixed schema.
pub(super) fn referenced_message(kind: &Kind, is_map: bool) -> Option<MessageDescriptor> {
    let Kind::Message(message) = kind else {
        return None;
    };
    let message = if is_map {
        match message.map_entry_value_field().kind() {
            Kind::Message(value) => value,
            _ => return None,
        }
    } else {
        message.clone()
    };
    (!wkt::is_well_known(&message)).then_some(message)
}

/// Nodes on a cycle: Tarjan's strongly connected components, iterative so that deep graphs
/// cannot overflow the stack.
fn cyclic_nodes(
    nodes: &BTreeMap<String, MessageDescriptor>,
    edges: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, ()> {
    let names: Vec<&String> = nodes.keys().collect();
    let index_of: HashMap<&String, usize> =
        names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let adjacency: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            edges
                .get(*n)
                .map(|targets| {
                    targets
                        .iter()
                        .filter_map(|t| index_of.get(t).copied())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let n = names.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut cyclic = BTreeMap::new();
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut edge)) = work.last_mut() {
            if let Some(&w) = adjacency[v].get(*edge) {
                *edge += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let self_loop = adjacency[v].contains(&v);
                if component.len() > 1 || self_loop {
                    for w in component {
                        cyclic.insert(names[w].clone(), ());
                    }
                }
            }
        }
    }
    cyclic
}
