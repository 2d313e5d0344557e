//! Echo-style implementations of the testdata services, with a little state where the tests need
//! it: errors with details, slow calls for deadlines, cancellation observers, and streams.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};
use tonic_types::{ErrorDetails, StatusExt};

use crate::testdata;

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

/// Counts what the tests need to observe on the backend side.
#[derive(Debug, Default)]
pub struct Observed {
    /// Calls that started.
    pub started: AtomicUsize,
    /// Calls whose future was dropped before it completed (cancelled by the client).
    pub cancelled: AtomicUsize,
}

/// Marks a call as cancelled if dropped before `done()`.
struct CancelGuard {
    observed: Arc<Observed>,
    done: bool,
}

impl CancelGuard {
    fn new(observed: &Arc<Observed>) -> CancelGuard {
        observed.started.fetch_add(1, Ordering::SeqCst);
        CancelGuard {
            observed: observed.clone(),
            done: false,
        }
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if !self.done {
            self.observed.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Implements tonic service traits for the test services, in one of two forms.
///
/// `pub struct Name: path::Trait { method(Message); … }`, as many as given: defines each unit
/// struct (`Debug`, `Default`, `Clone`) and implements the trait with every listed method
/// answering its request unchanged.
///
/// `Type: path::Trait { echo { method(Message); … } stubs { method(Request) -> Response; … }
/// further methods }`: the `echo` methods answer their request unchanged, the `stubs` answer
/// `UNIMPLEMENTED` ("not in this test"), and the further methods are written out.
#[macro_export]
macro_rules! service_impl {
    (
        @impl $type:ty: $service:path {
            echo { $($method:ident($message:ty);)* }
            stubs { $($stub:ident($request:ty) -> $response:ty;)* }
        }
        $($methods:tt)*
    ) => {
        #[::tonic::async_trait]
        impl $service for $type {
            $(
                async fn $method(
                    &self,
                    request: ::tonic::Request<$message>,
                ) -> ::std::result::Result<::tonic::Response<$message>, ::tonic::Status> {
                    Ok(::tonic::Response::new(request.into_inner()))
                }
            )*
            $(
                async fn $stub(
                    &self,
                    _request: ::tonic::Request<$request>,
                ) -> ::std::result::Result<::tonic::Response<$response>, ::tonic::Status> {
                    Err(::tonic::Status::unimplemented("not in this test"))
                }
            )*
            $($methods)*
        }
    };
    ($(pub struct $type:ident: $service:path { $($method:ident($message:ty);)* })*) => {
        $(
            #[derive(Debug, Default, Clone)]
            pub struct $type;

            $crate::service_impl!(
                @impl $type: $service { echo { $($method($message);)* } stubs {} }
            );
        )*
    };
    (
        $type:ty: $service:path {
            echo { $($method:ident($message:ty);)* }
            stubs { $($stub:ident($request:ty) -> $response:ty;)* }
            $($methods:tt)*
        }
    ) => {
        $crate::service_impl!(
            @impl $type: $service {
                echo { $($method($message);)* }
                stubs { $($stub($request) -> $response;)* }
            }
            $($methods)*
        );
    };
}

service_impl! {
    pub struct Scalars: testdata::scalars::scalar_service_server::ScalarService {
        echo(testdata::scalars::AllScalars);
    }
    pub struct Search: testdata::oneofs::search_service_server::SearchService {
        echo(testdata::oneofs::SearchRequest);
    }
    pub struct LongFields: testdata::long_fields::long_field_service_server::LongFieldService {
        echo(testdata::long_fields::Recommendation);
    }
    pub struct Maps: testdata::maps::map_service_server::MapService {
        echo(testdata::maps::Maps);
    }
    pub struct Recursion: testdata::recursion::recursion_service_server::RecursionService {
        echo_tree(testdata::recursion::TreeNode);
        echo_forest(testdata::recursion::Forest);
        echo_a(testdata::recursion::A);
        evaluate(testdata::recursion::Expr);
        echo_transfer(testdata::recursion::Transfer);
        echo_holder(testdata::recursion::Holder);
    }
}

#[derive(Debug, Default, Clone)]
pub struct WellKnown {
    pub observed: Arc<Observed>,
}

service_impl! {
    WellKnown: testdata::wkt::well_known_service_server::WellKnownService {
        echo {
            echo(testdata::wkt::WellKnownTypes);
            shout(String);
            echo_value(prost_types::Value);
            echo_struct(prost_types::Struct);
            echo_any(prost_types::Any);
            echo_field_mask(prost_types::FieldMask);
            echo_list(prost_types::ListValue);
        }
        stubs {}

        async fn now(&self, _: Request<()>) -> Result<Response<prost_types::Timestamp>, Status> {
            Ok(Response::new(prost_types::Timestamp {
                seconds: 1_700_000_000,
                nanos: 500_000_000,
            }))
        }

        /// Sleeps for the given duration; a dropped call counts as cancelled.
        async fn sleep(
            &self,
            request: Request<prost_types::Duration>,
        ) -> Result<Response<()>, Status> {
            let d = request.into_inner();
            let wait = Duration::new(d.seconds.max(0) as u64, d.nanos.max(0) as u32);
            let mut guard = CancelGuard::new(&self.observed);
            tokio::time::sleep(wait).await;
            guard.done = true;
            Ok(Response::new(()))
        }
    }
}

/// An inventory of five items, `1` to `5`, named `item-1` … `item-5`.
#[derive(Debug, Default, Clone)]
pub struct Inventory {
    pub observed: Arc<Observed>,
}

fn item(n: i32) -> testdata::streaming::Item {
    testdata::streaming::Item {
        id: n.to_string(),
        name: format!("item-{n}"),
        quantity: n * 10,
    }
}

#[tonic::async_trait]
impl testdata::streaming::inventory_service_server::InventoryService for Inventory {
    /// `""` is INVALID_ARGUMENT with a BadRequest violation; an unknown id is NOT_FOUND with
    /// ResourceInfo; `slow` takes ten seconds (deadline and cancellation tests).
    async fn get_item(
        &self,
        request: Request<testdata::streaming::GetItemRequest>,
    ) -> Result<Response<testdata::streaming::Item>, Status> {
        let id = request.into_inner().id;
        if id.is_empty() {
            let details = ErrorDetails::with_bad_request_violation("id", "must not be empty");
            return Err(Status::with_error_details(
                tonic::Code::InvalidArgument,
                "the request is invalid",
                details,
            ));
        }
        if id == "slow" {
            let mut guard = CancelGuard::new(&self.observed);
            tokio::time::sleep(Duration::from_secs(10)).await;
            guard.done = true;
        }
        match id.parse::<i32>() {
            Ok(n @ 1..=5) => Ok(Response::new(item(n))),
            _ => {
                let mut details = ErrorDetails::new();
                details.set_resource_info("testdata.streaming.Item", &id, "", "no such item");
                Err(Status::with_error_details(
                    tonic::Code::NotFound,
                    format!("item {id} not found"),
                    details,
                ))
            }
        }
    }

    type ListItemsStream = BoxStream<testdata::streaming::Item>;

    /// Streams the items whose name starts with `name_prefix` (at most `limit` when positive).
    /// The prefix `watch` streams the five items over and over, one every 200 ms, until the
    /// call is dropped (counted cancelled). The prefix `fail` streams two items and then fails
    /// with UNAVAILABLE; `slow` streams all
    /// five, 200 ms apart.
    async fn list_items(
        &self,
        request: Request<testdata::streaming::ListItemsRequest>,
    ) -> Result<Response<Self::ListItemsStream>, Status> {
        let request = request.into_inner();
        let limit = if request.limit > 0 {
            request.limit as usize
        } else {
            usize::MAX
        };
        let prefix = request.name_prefix;
        let stream: Self::ListItemsStream = match prefix.as_str() {
            "fail" => Box::pin(tokio_stream::iter(vec![
                Ok(item(1)),
                Ok(item(2)),
                Err(Status::unavailable("the inventory shard went away")),
            ])),
            "slow" => Box::pin(
                tokio_stream::iter((1..=5).map(|n| Ok(item(n))))
                    .throttle(Duration::from_millis(200)),
            ),
            // Never ends: an item every 200 ms until the call is dropped, which counts as
            // cancelled.
            "watch" => {
                let guard = CancelGuard::new(&self.observed);
                Box::pin(
                    tokio_stream::iter((1..=5).cycle().map(move |n| {
                        let _kept = &guard;
                        Ok(item(n))
                    }))
                    .throttle(Duration::from_millis(200)),
                )
            }
            _ => Box::pin(tokio_stream::iter(
                (1..=5)
                    .map(item)
                    .filter(|i| i.name.starts_with(&prefix))
                    .take(limit)
                    .map(Ok)
                    .collect::<Vec<_>>(),
            )),
        };
        Ok(Response::new(stream))
    }

    /// Stores items with an id and rejects the others.
    async fn upload_items(
        &self,
        request: Request<Streaming<testdata::streaming::Item>>,
    ) -> Result<Response<testdata::streaming::UploadSummary>, Status> {
        let mut stream = request.into_inner();
        let mut summary = testdata::streaming::UploadSummary::default();
        while let Some(item) = stream.next().await {
            let item = item?;
            if item.id.is_empty() {
                summary.rejected_ids.push(item.name);
            } else {
                summary.stored += 1;
            }
        }
        Ok(Response::new(summary))
    }

    type ChatStream = BoxStream<testdata::streaming::ChatMessage>;

    /// Answers every message with `echo: <text>` from `server`.
    async fn chat(
        &self,
        request: Request<Streaming<testdata::streaming::ChatMessage>>,
    ) -> Result<Response<Self::ChatStream>, Status> {
        let stream = request.into_inner().map(|message| {
            message.map(|m| testdata::streaming::ChatMessage {
                sender: "server".to_owned(),
                text: format!("echo: {}", m.text),
            })
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

/// The catalog of `tool_options.proto`: one product, `p1`.
#[derive(Debug, Default, Clone)]
pub struct Catalog;

fn product() -> testdata::tool_options::Product {
    let price = |amount| testdata::tool_options::Price {
        amount_minor: amount,
        currency: "EUR".to_owned(),
        internal_cost_code: "secret".to_owned(),
    };
    testdata::tool_options::Product {
        id: "p1".to_owned(),
        name: "Teapot".to_owned(),
        price: Some(price(2500)),
        sale_price: Some(price(1999)),
    }
}

#[tonic::async_trait]
impl testdata::tool_options::catalog_service_server::CatalogService for Catalog {
    async fn get_product(
        &self,
        request: Request<testdata::tool_options::GetProductRequest>,
    ) -> Result<Response<testdata::tool_options::Product>, Status> {
        match request.into_inner().id.as_str() {
            "p1" => Ok(Response::new(product())),
            other => Err(Status::not_found(format!("product {other} not found"))),
        }
    }

    async fn update_product(
        &self,
        request: Request<testdata::tool_options::UpdateProductRequest>,
    ) -> Result<Response<testdata::tool_options::Product>, Status> {
        Ok(Response::new(
            request.into_inner().product.unwrap_or_default(),
        ))
    }

    async fn delete_product(
        &self,
        _: Request<testdata::tool_options::GetProductRequest>,
    ) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }

    async fn search_web(
        &self,
        request: Request<testdata::tool_options::SearchWebRequest>,
    ) -> Result<Response<testdata::tool_options::SearchWebResponse>, Status> {
        let query = request.into_inner().query;
        Ok(Response::new(testdata::tool_options::SearchWebResponse {
            urls: vec![format!("https://example.com/?q={query}")],
        }))
    }

    type WatchProductsStream = BoxStream<testdata::tool_options::Product>;

    async fn watch_products(
        &self,
        _: Request<testdata::tool_options::WatchProductsRequest>,
    ) -> Result<Response<Self::WatchProductsStream>, Status> {
        Ok(Response::new(Box::pin(tokio_stream::iter(
            (0..30).map(|_| Ok(product())),
        ))))
    }

    async fn internal_rebuild(&self, _: Request<()>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }

    async fn reindex(&self, _: Request<()>) -> Result<Response<()>, Status> {
        Ok(Response::new(()))
    }
}
