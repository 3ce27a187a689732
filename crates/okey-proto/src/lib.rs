//! Generated code for the okey.v1 gRPC contracts (`proto/okey/v1`).
//!
//! Only each service's `grpc` module and clients (tests, `okeyctl`) use these types; domain code
//! never sees them (see ARCHITECTURE.md).

/// The `okey.v1` package: messages, clients (`*_client`) and servers (`*_server`).
pub mod v1 {
    tonic::include_proto!("okey.v1");
}

/// Encoded `FileDescriptorSet` of every okey.v1 file and its imports, plus `google/rpc/status.proto`
/// and `google/rpc/error_details.proto` (the error details every error carries), for gRPC
/// reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("okey_v1_descriptor");

/// Fully qualified gRPC service names, as health checks and reflection know them.
pub mod service_names {
    /// `okey.v1.AccountsService`.
    pub const ACCOUNTS: &str = "okey.v1.AccountsService";
    /// `okey.v1.MatchmakingService`.
    pub const MATCHMAKING: &str = "okey.v1.MatchmakingService";
    /// `okey.v1.TableService`.
    pub const TABLE: &str = "okey.v1.TableService";
    /// `okey.v1.ScoringService`.
    pub const SCORING: &str = "okey.v1.ScoringService";
}

/// One method of the contract, as [`methods_of`] reads it from [`FILE_DESCRIPTOR_SET`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractMethod {
    /// Its full gRPC path: `/okey.v1.TableService/WatchTable`.
    pub path: String,
    /// The server answers with a stream.
    pub server_streaming: bool,
}

/// Every method of `services` (full names, `okey.v1.TableService`) in the contract: what the
/// access tables and the stream layer are checked against, read once from the descriptor set.
pub fn methods_of(services: &[&str]) -> Vec<ContractMethod> {
    use prost::Message;
    let set = prost_types::FileDescriptorSet::decode(FILE_DESCRIPTOR_SET)
        .expect("the contract's descriptor set decodes");
    let mut methods = Vec::new();
    for file in &set.file {
        for service in &file.service {
            let full = format!("{}.{}", file.package(), service.name());
            if services.contains(&full.as_str()) {
                methods.extend(service.method.iter().map(|m| ContractMethod {
                    path: format!("/{full}/{}", m.name()),
                    server_streaming: m.server_streaming(),
                }));
            }
        }
    }
    methods
}
