fn main() {
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("protoc-bin-vendored has no protoc for this platform");
    let include = protoc_bin_vendored::include_path().expect("protoc-bin-vendored has no include directory");
    println!("{}\n{}", protoc.display(), include.display());
}
