//! The other services fetch the token keys over TLS: `tokens.keys_url` `https://…` with the CA of
//! `tokens.keys_ca_pem`, through a TLS front (rustls, as a gateway or mesh would terminate it) of
//! the real accounts service. A certificate that does not chain to the trusted CA is refused.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestApp;
use okey_platform::auth::{Access, AccessTable, AuthLayer, fetch_public_keys};
use okey_platform::testing::TestInfra;
use okey_platform::{ServiceKind, Settings};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A CA made for this test only (valid for a century), and a certificate it signed for
/// `127.0.0.1` / `localhost` with that certificate's private key. Never trust them anywhere else.
const TEST_CA_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBlDCCATugAwIBAgIUWYCmTAGOkPgN2kqFex5yVampS/kwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMb2tleSB0ZXN0IENBMCAXDTI2MTIwMTExMzMxN1oYDzIxMjYx
MTA3MTEzMzE3WjAXMRUwEwYDVQQDDAxva2V5IHRlc3QgQ0EwWTATBgcqhkjOPQIB
BggqhkjOPQMBBwNCAAS2zu3BpG5u/hg22UOockOv3IouQrlCxrfDBDwHtTAQjfvq
LmrgS2E8mbpz6LUHPAwNJVxFXa3//G3zXJ8/qOVQo2MwYTAdBgNVHQ4EFgQU/UwK
hGa5M464iaOUyX//Ko76c4UwHwYDVR0jBBgwFoAU/UwKhGa5M464iaOUyX//Ko76
c4UwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAQYwCgYIKoZIzj0EAwID
RwAwRAIgWEbHxr8BgwucJC2akAx7sHWTf29fLpdKJSyvbvquIo8CIHqDuKWtJ4QU
kEG5OQ903OqJ+FnpBFJZnEWH0Wl/rvxY
-----END CERTIFICATE-----";
const TEST_SERVER_CERT_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBvzCCAWWgAwIBAgIUAVg7w6luKoeMkjr0BHvZ6TfwpPEwCgYIKoZIzj0EAwIw
FzEVMBMGA1UEAwwMb2tleSB0ZXN0IENBMCAXDTI2MTIwMTExMzMxN1oYDzIxMjYx
MTA3MTEzMzE3WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggq
hkjOPQMBBwNCAATD2+1OGnc3w2Imuv4YHI2LZq824lftiv+ZeyNWOlf50nK6NLtU
4nr0oXDwQvccs1vPaJ7euW0M9pUGwt0GZ+88o4GPMIGMMBoGA1UdEQQTMBGHBH8A
AAGCCWxvY2FsaG9zdDAJBgNVHRMEAjAAMA4GA1UdDwEB/wQEAwIHgDATBgNVHSUE
DDAKBggrBgEFBQcDATAdBgNVHQ4EFgQUq03o273KCZw30TQLCngFgPWUkW8wHwYD
VR0jBBgwFoAU/UwKhGa5M464iaOUyX//Ko76c4UwCgYIKoZIzj0EAwIDSAAwRQIg
HnDBhw/eTGCFPR4+FVUR65SxWAmrDQmD1xUUzOHoKkwCIQDuTozI0qFN8lDnvEIw
+abJzw3B8v2zUnSUZBfDPlhXDw==
-----END CERTIFICATE-----";
const TEST_SERVER_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgyw+2TyYT19SYpB3F
Ey5tjym2XeQ5USyucsAZN90VmdmhRANCAATD2+1OGnc3w2Imuv4YHI2LZq824lft
iv+ZeyNWOlf50nK6NLtU4nr0oXDwQvccs1vPaJ7euW0M9pUGwt0GZ+88
-----END PRIVATE KEY-----";

/// Listens on a free loopback port, terminates TLS (HTTP/2 by ALPN) with the test certificate
/// and passes every connection on to the accounts service at `backend`. Returns the port.
async fn tls_front(backend: u16) -> u16 {
    let certs = vec![CertificateDer::from_pem_slice(TEST_SERVER_CERT_PEM.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(TEST_SERVER_KEY_PEM.as_bytes()).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(client).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(("127.0.0.1", backend)).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn the_token_keys_are_fetched_over_https_from_a_trusted_certificate_only() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = TestApp::start(&infra, &[]).await;
    let front = tls_front(app.port).await;
    let https = format!("https://127.0.0.1:{front}");

    let over_tls = fetch_public_keys(&https, TEST_CA_PEM)
        .await
        .expect("the keys over TLS");
    let plain = fetch_public_keys(&app.url(), "").await.expect("the keys");
    assert!(!over_tls.keys.is_empty());
    assert_eq!(over_tls, plain, "the same keys either way");

    // Not chaining to a trusted CA (here: the system's roots) is refused, and so is plaintext
    // to the TLS port.
    let untrusted = fetch_public_keys(&https, "").await;
    assert!(untrusted.is_err(), "{untrusted:?}");
    let plaintext = fetch_public_keys(&format!("http://127.0.0.1:{front}"), "").await;
    assert!(plaintext.is_err(), "{plaintext:?}");

    // What a service does with the settings: poll the keys over https and verify with them.
    let mut env = infra.env_for(ServiceKind::Table, 0);
    env.retain(|(k, _)| k != "OKEY_TOKENS__KEYS_URL" && k != "OKEY_TOKENS__PUBLIC_KEYS");
    env.push(("OKEY_TOKENS__KEYS_URL".into(), https));
    env.push(("OKEY_TOKENS__KEYS_CA_PEM".into(), TEST_CA_PEM.into()));
    let settings = Settings::from_sources(ServiceKind::Table, None, env).expect("valid settings");
    let layer = AuthLayer::from_settings(
        &settings,
        AccessTable::new(&[("/okey.v1.TableService/GetTable", Access::SIGNED_IN)]),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let wanted: Vec<String> = plain.keys.iter().map(|k| k.kid.clone()).collect();
    while layer.verifier().key_ids().len() < wanted.len() {
        assert!(
            Instant::now() < deadline,
            "the keys were never fetched over https"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for kid in &wanted {
        assert!(layer.verifier().key_ids().contains(kid), "{kid}");
    }
    app.stop().await;
}

#[test]
fn a_keys_ca_that_is_not_pem_certificates_is_a_bad_setting() {
    let env = vec![(
        "OKEY_TOKENS__KEYS_CA_PEM".to_owned(),
        "not a certificate".to_owned(),
    )];
    let error = Settings::from_sources(ServiceKind::Table, None, env).unwrap_err();
    assert!(error.to_string().contains("tokens.keys_ca_pem"), "{error}");
    let env = vec![(
        "OKEY_TOKENS__KEYS_URL".to_owned(),
        "ftp://accounts:50051".to_owned(),
    )];
    let error = Settings::from_sources(ServiceKind::Table, None, env).unwrap_err();
    assert!(error.to_string().contains("tokens.keys_url"), "{error}");
}
