//! Protos `testdata/` does not have, compiled by the vendored protoc: the differential tests of
//! both directions (`encode/transcode_tests.rs`, `decode/transcode_tests.rs`) run over them too.

use prost_reflect::DescriptorPool;
use test_kit::testdata;

/// proto2 and proto3 features testdata does not have: custom defaults, required, unpacked and
/// packed lists, map entries with presence, `NullValue` fields, proto3 `optional`, a
/// `json_name` equal to a sibling's proto name.
const SYNTHETIC: &str = r#"
syntax = "proto2";
package synthetic;
import "google/protobuf/struct.proto";
import "google/protobuf/wrappers.proto";
enum Color { RED = 1; GREEN = 2; }
enum Zeroed { ZERO = 0; ONE = 1; }
message P2 {
  optional int32 a = 1 [default = 5];
  required string b = 2;
  repeated int32 c = 3;
  repeated sint64 d = 4 [packed = true];
  map<int32, int32> m = 5;
  optional google.protobuf.NullValue n = 6;
  repeated google.protobuf.NullValue ns = 7;
  optional Color e = 8;
  oneof o { int32 oa = 10; string ob = 11; Color oc = 15; }
  optional double f = 12 [default = -0.0];
  map<string, Zeroed> mc = 13;
  optional bytes by = 14 [default = "x"];
  repeated Color es = 16;
  repeated google.protobuf.Int64Value ws = 17;
  optional P2 child = 18;
  optional int32 clash = 19 [json_name = "other"];
  optional int32 other = 20 [json_name = "renamed"];
}
service S2 { rpc Echo(P2) returns (P2); }
"#;

const SYNTHETIC3: &str = r#"
syntax = "proto3";
package synthetic3;
import "google/protobuf/struct.proto";
message P3 {
  optional int32 a = 1;
  google.protobuf.NullValue n = 2;
  repeated google.protobuf.NullValue ns = 3;
  repeated double ds = 4 [packed = false];
  map<bool, google.protobuf.Value> mv = 5;
  optional float fl = 8;
  repeated google.protobuf.Value vs = 9;
  map<uint64, P3> children = 10;
  oneof pick { google.protobuf.NullValue pn = 11; google.protobuf.Value pv = 12; }
}
service S3 { rpc Echo(P3) returns (P3); rpc Stream(stream P3) returns (P3); }
"#;

/// `SYNTHETIC` and `SYNTHETIC3` compiled by the vendored protoc.
pub(crate) fn pool() -> DescriptorPool {
    let set = testdata::compile_sources(&[
        ("synthetic/p2.proto", SYNTHETIC),
        ("synthetic/p3.proto", SYNTHETIC3),
    ]);
    DescriptorPool::decode(set.as_slice()).expect("decode the set")
}
