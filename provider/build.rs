//! Compiles the tfplugin5 and go-plugin controller protocols with `protox`
//! (a pure-Rust protobuf compiler), so no system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/tfplugin5.proto", "proto/grpc_controller.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .generate_default_stubs(true)
        .compile_fds(descriptors)?;
    Ok(())
}
