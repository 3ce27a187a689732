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
