//! Seeds the players help choose, against the real service, PostgreSQL and NATS: the commitment
//! to the first hand's server seed is public before anyone sits; three players send a client
//! seed for the first hand while the table waits and all four send one for the second during the
//! first; each deal is then the documented derivation (`docs/fairness.md`) of the revealed server
//! seed and the seeds sent, in seat order, and the server seed hashes to the commitment published
//! before the seeds were taken; every seat is shown the rack of that deal. A late seed, one for
//! another hand than the next, a second one, a stranger's and a malformed one are refused with
//! their reasons and store nothing.

mod common;

use common::*;
use okey_platform::testing::TestInfra;
use okey_proto::v1 as pb;
use okey_rules::Deal;
use table::domain::seeding::deal_seed_v1;
use table::domain::{Seed, TableEvent, hex, seed_from_hex, seed_hash};
use tonic::Code;
use tonic_types::StatusExt;

fn assert_refused(status: &tonic::Status, code: Code, why: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    let details = status.get_error_details();
    assert_eq!(
        details.error_info().expect("ErrorInfo").reason,
        why,
        "{status:?}"
    );
}

async fn send(
    client: &mut Client,
    table: &str,
    hand: i32,
    seed: &str,
) -> Result<pb::SubmitClientSeedResponse, tonic::Status> {
    let request = client.req(pb::SubmitClientSeedRequest {
        request_id: uuid(),
        table: table.to_owned(),
        hand_number: hand,
        seed: seed.to_owned(),
    });
    Ok(client.api.submit_client_seed(request).await?.into_inner())
}

async fn next_commitment(client: &mut Client, table: &str) -> String {
    let request = client.req(pb::GetTableRequest {
        name: table.to_owned(),
    });
    let table = client.api.get_table(request).await.unwrap().into_inner();
    table.table.unwrap().next_server_seed_sha256
}

/// Seat `s`'s client seed in this test.
fn seed_of(seat: usize) -> Seed {
    [0x10 * (seat as u8 + 1); 32]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_deal_is_the_derivation_of_the_committed_server_seed_and_every_client_seed() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let mut admin = Client::new(channel.clone(), &app.settings, "admin", &["admin"]);
    let table = admin.create(rules(2)).await;
    let mut clients: Vec<Client> = (0..4)
        .map(|s| {
            Client::new(
                channel.clone(),
                &app.settings,
                &format!("p{s}-{}", uuid()),
                &["player"],
            )
        })
        .collect();
    let mut stranger = Client::new(channel.clone(), &app.settings, "stranger", &["player"]);

    // The first hand's commitment is public before anyone sits.
    let committed_1 = next_commitment(&mut admin, &table).await;
    assert_eq!(committed_1.len(), 64);
    // Seats 0-2 sit and send a seed for hand 1; seat 3's sitting deals it.
    for (s, client) in clients.iter_mut().enumerate().take(3) {
        client.join(&table, s as i32).await;
        let answer = send(client, &table, 1, &hex(&seed_of(s))).await.unwrap();
        assert_eq!(answer.server_seed_sha256, committed_1);
    }
    let before = stored(&app.settings, &table).await.0.len();
    let refused = send(&mut clients[0], &table, 1, &hex(&seed_of(3)))
        .await
        .unwrap_err();
    assert_refused(
        &refused,
        Code::FailedPrecondition,
        "client_seed_already_sent",
    );
    let refused = send(&mut stranger, &table, 1, &hex(&seed_of(3)))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::PermissionDenied, "not_seated");
    let refused = send(&mut clients[1], &table, 1, "zz").await.unwrap_err();
    assert_refused(&refused, Code::InvalidArgument, "invalid_client_seed");
    let refused = send(&mut clients[1], &table, 0, &hex(&seed_of(1)))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::InvalidArgument, "invalid_hand_number");
    assert_eq!(
        stored(&app.settings, &table).await.0.len(),
        before,
        "refusals store nothing"
    );
    clients[3].join(&table, 3).await;

    // Hand 1 is dealt: a seed for it is late, one for hand 3 is not taken yet.
    let refused = send(&mut clients[3], &table, 1, &hex(&seed_of(3)))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "client_seed_too_late");
    let refused = send(&mut clients[3], &table, 3, &hex(&seed_of(3)))
        .await
        .unwrap_err();
    assert_refused(&refused, Code::FailedPrecondition, "client_seed_not_open");
    // All four send one for hand 2 during hand 1, under the commitment the deal published.
    let committed_2 = next_commitment(&mut clients[0], &table).await;
    assert_ne!(committed_2, committed_1);
    for (s, client) in clients.iter_mut().enumerate() {
        let answer = send(client, &table, 2, &hex(&seed_of(s))).await.unwrap();
        assert_eq!(answer.server_seed_sha256, committed_2);
    }

    let mut received: Vec<Received> = (0..4).map(|_| Received::default()).collect();
    play(&table, &mut clients, &mut received, |_| false).await;
    let (events, seeds) = stored(&app.settings, &table).await;
    // Every seat was shown exactly the rack its deal seed deals, and every score folds.
    check_received(&events, &seeds, &received);
    check_scores(&events, &seeds);

    let version_of = |wanted: &dyn Fn(&TableEvent) -> bool| {
        events
            .iter()
            .find(|e| wanted(&e.event))
            .map(|e| e.version)
            .expect("the event is stored")
    };
    for (hand, committed, sent) in [
        (1u32, &committed_1, [true, true, true, false]),
        (2, &committed_2, [true; 4]),
    ] {
        let dealt_at = version_of(
            &|e| matches!(e, TableEvent::HandDealt { hand_number, .. } if *hand_number == hand),
        );
        let TableEvent::HandDealt {
            seed_sha256,
            seeding: Some(seeding),
            first,
            ..
        } = &events[dealt_at as usize - 1].event
        else {
            panic!("hand {hand} was dealt without seeding");
        };
        let ended_at = version_of(
            &|e| matches!(e, TableEvent::HandEnded { hand_number, .. } if *hand_number == hand),
        );
        let TableEvent::HandEnded {
            seed,
            server_seed: Some(server_seed),
            ..
        } = &events[ended_at as usize - 1].event
        else {
            panic!("hand {hand}'s end does not reveal its server seed");
        };
        // The server seed is the one committed, and the commitment came before every seed.
        assert_eq!(&seeding.server_seed_sha256, committed);
        let server = seed_from_hex(server_seed, committed).expect("it hashes to the commitment");
        for e in &events {
            if let TableEvent::ClientSeedSent { hand_number, .. } = &e.event
                && *hand_number == hand
            {
                assert!(seeding.committed_at < e.version && e.version < dealt_at);
            }
        }
        // The deal used every seed sent, in seat order, through the documented derivation.
        let slots: [Option<Seed>; 4] = std::array::from_fn(|s| sent[s].then(|| seed_of(s)));
        let expected: [Option<String>; 4] = slots.map(|c| c.map(|c| hex(&c)));
        assert_eq!(seeding.client_seeds, expected, "hand {hand}");
        let derived = deal_seed_v1(&server, &slots);
        assert_eq!(seed, &hex(&derived), "hand {hand}");
        assert_eq!(seed_sha256, &seed_hash(&derived));
        if hand == 2 {
            // The deal a player reads afterwards is the derivation's.
            let history = hand_history(&mut admin, &table, 2).await;
            let Some(pb::hand_history_entry::Entry::Deal(deal)) = &history.entries[0].entry else {
                panic!("the history starts with the deal");
            };
            let expected = Deal::from_seed(&derived, *first);
            for s in 0..4 {
                let rack: Vec<String> = expected.racks[s].iter().map(ToString::to_string).collect();
                assert_eq!(deal.racks[s].tiles, rack);
            }
            // Its inputs: the commitment (hand 1's deal) and the four seeds.
            let inputs: Vec<i64> = history.inputs.iter().map(|e| e.version).collect();
            assert_eq!(inputs.len(), 5, "{inputs:?}");
            assert_eq!(inputs[0], seeding.committed_at as i64);
        }
    }
    app.stop().await;
}

/// A hand's history, read as support (the admin token).
async fn hand_history(admin: &mut Client, table: &str, hand: i32) -> pb::GetHandHistoryResponse {
    let request = admin.req(pb::GetHandHistoryRequest {
        table: table.to_owned(),
        hand_number: hand,
        page_size: 0,
        page_token: String::new(),
    });
    admin
        .api
        .get_hand_history(request)
        .await
        .unwrap()
        .into_inner()
}
