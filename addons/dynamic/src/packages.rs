//! Making the tools of a [`SetPools`]' services a package at a time: each package's pool is
//! built for its services' tools and let go once they are made, so that no pool of the whole
//! set is ever held. Packages are made on several threads; the tools come back in the order of
//! the services, with the first error where making them one after another would stop.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
    },
};

use super::schema_texts::SchemaTexts;
use prost_reflect::DescriptorPool;
use tonic_mcp::{Error, SetPools, codegen::BoxTransport};
use tonic_mcp_schema::{Context, Options, comments::Comments, names::package_of};

use super::{
    ByName,
    lazy::SchemaSource,
    make::{Made, Maker, make_run},
    name_tools, qualify,
};

/// The tools of one service, or why they cannot be made.
type MadeTools = Result<Vec<Made>, Error>;

/// What making the tools of a set's services reads.
pub(super) struct ByPackage<'a> {
    pub(super) set: &'a Arc<SetPools>,
    pub(super) options: &'a Options,
    pub(super) comments: &'a Arc<Comments>,
    pub(super) later: Option<&'a Arc<SchemaSource>>,
    pub(super) texts: &'a SchemaTexts,
    /// The services whose tools' names are qualified where they collide.
    pub(super) unique: Option<&'a [String]>,
    /// The transport of the tools, for the Operations endpoints of those that wait.
    pub(super) transport: &'a BoxTransport,
}

/// One package's services: those made, by their indexes among the names asked for, and those
/// whose tools' names are gathered for [`ByPackage::unique`] (made or not).
struct Group {
    package: String,
    services: Vec<(usize, String)>,
    named: Vec<String>,
}

impl ByPackage<'_> {
    /// The tools of each of `names`, in order, made on up to `threads` threads a package at a
    /// time, up to and including the first error.
    pub(super) fn make(&self, names: &[&str], threads: usize) -> Vec<MadeTools> {
        let known: HashSet<&str> = self.set.services().iter().map(String::as_str).collect();
        let mut groups: Vec<Group> = Vec::new();
        let mut at_package: HashMap<String, usize> = HashMap::new();
        let mut group_of = |groups: &mut Vec<Group>, package: &str| {
            *at_package.entry(package.to_owned()).or_insert_with(|| {
                groups.push(Group {
                    package: package.to_owned(),
                    services: Vec::new(),
                    named: Vec::new(),
                });
                groups.len() - 1
            })
        };
        let mut unknown = None;
        for (at, name) in names.iter().enumerate() {
            if !known.contains(name) {
                unknown = Some(at);
                break;
            }
            let group = group_of(&mut groups, package_of(name));
            groups[group].services.push((at, (*name).to_owned()));
        }
        for name in self.unique.unwrap_or_default() {
            if known.contains(name.as_str()) {
                let group = group_of(&mut groups, package_of(name));
                groups[group].named.push(name.clone());
            }
        }
        let results: Mutex<Vec<Option<MadeTools>>> =
            Mutex::new((0..names.len()).map(|_| None).collect());
        let by_name: Mutex<ByName> = Mutex::default();
        let next = AtomicUsize::new(0);
        let work = || {
            while let Some(group) = groups.get(next.fetch_add(1, Ordering::Relaxed)) {
                let (made, named) = self.make_package(group);
                let mut results = results.lock().unwrap_or_else(PoisonError::into_inner);
                for (at, result) in made {
                    results[at] = Some(result);
                }
                let mut by_name = by_name.lock().unwrap_or_else(PoisonError::into_inner);
                for (name, mut rpcs) in named {
                    by_name.entry(name).or_default().append(&mut rpcs);
                }
            }
        };
        let threads = threads.clamp(1, groups.len().max(1));
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
            work();
            for other in others {
                if let Err(panic) = other.join() {
                    // A panic in the schema generator is a bug; it surfaces as one here.
                    std::panic::resume_unwind(panic);
                }
            }
        });
        let mut by_name = by_name.into_inner().unwrap_or_else(PoisonError::into_inner);
        // In the order of the RPCs, as naming them one service after another gives.
        for rpcs in by_name.values_mut() {
            rpcs.sort();
        }
        let renamed = qualify(self.options.prefix.as_deref(), by_name);
        let mut out = Vec::with_capacity(names.len());
        for (at, result) in results
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .into_iter()
            .enumerate()
        {
            if unknown == Some(at) {
                out.push(Err(Error::UnknownService {
                    name: names[at].to_owned(),
                }));
                break;
            }
            let Some(result) = result else { break };
            let result = result.map(|mut tools| {
                for tool in &mut tools {
                    tool.rename(&renamed);
                }
                tools
            });
            let failed = result.is_err();
            out.push(result);
            if failed {
                break;
            }
        }
        out
    }

    /// The tools of one package's services, by their index, and the names of the RPCs of
    /// those [`unique`](Self::unique) names; its pool is let go on return.
    fn make_package(&self, group: &Group) -> (Vec<(usize, MadeTools)>, ByName) {
        let mut by_name = ByName::new();
        let pool = match self.set.files().package_pool(&group.package) {
            Ok(pool) => pool,
            Err(message) => {
                let error = || Error::DescriptorSet(message.clone());
                return (
                    group
                        .services
                        .iter()
                        .map(|&(at, _)| (at, Err(error())))
                        .collect(),
                    by_name,
                );
            }
        };
        for name in &group.named {
            if let Some(service) = pool.get_service_by_name(name) {
                name_tools(self.options, &service, &mut by_name);
            }
        }
        let context = Context::with_comments(&pool, self.options, self.comments);
        let renamed = HashMap::new();
        let maker = Maker {
            pool: &pool,
            options: self.options,
            renamed: &renamed,
            later: self.later,
            texts: self.texts,
        };
        let names: Vec<&str> = group
            .services
            .iter()
            .map(|(_, name)| name.as_str())
            .collect();
        let made = make_run(&context, maker, &names)
            .into_iter()
            .zip(&group.services)
            .map(|(result, &(at, _))| {
                let result = result.and_then(|tools| {
                    tools
                        .into_iter()
                        .map(|tool| self.to_resolve_later(tool, &pool))
                        .collect()
                });
                (at, result)
            })
            .collect();
        (made, by_name)
    }

    /// `tool`, its types resolved once in `pool` (what does not resolve is refused now, as a
    /// tool of one pool is) and then let go, to be resolved again on its first call.
    fn to_resolve_later(&self, mut tool: Made, pool: &DescriptorPool) -> Result<Made, Error> {
        tool.tool.resolve_later(self.set, pool, self.transport)?;
        Ok(tool)
    }
}
