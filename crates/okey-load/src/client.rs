//! A player's gRPC client of the table service, signed with the platform's test key, and a table
//! of four such clients seated and dealt.

use std::time::{Duration, Instant};

use okey_platform::Settings;
use okey_platform::auth::Role;
use okey_platform::testing::test_token;
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use okey_rules::SeatView;
use tonic::transport::Channel;
use tonic::{Request, Status};

/// Connects to `port`, retrying while the server starts.
pub async fn connect(port: u16) -> Channel {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect()
            .await
        {
            Ok(channel) => return channel,
            Err(e) if Instant::now() > deadline => panic!("cannot connect to {port}: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// One player's gRPC client.
#[derive(Clone)]
pub struct Client {
    /// The token subject.
    pub id: String,
    pub token: String,
    pub api: TableServiceClient<Channel>,
}

impl Client {
    /// A client for `id` with `roles` (`admin`, `player`), its token signed by the platform's
    /// test key, which `TestInfra::env_for` makes services trust.
    pub fn new(channel: Channel, _settings: &Settings, id: &str, roles: &[&str]) -> Client {
        let roles: Vec<Role> = roles.iter().filter_map(|r| Role::parse(r)).collect();
        Client {
            id: id.to_owned(),
            token: test_token(id, &roles),
            api: TableServiceClient::new(channel),
        }
    }

    pub fn player(&self) -> String {
        format!("players/{}", self.id)
    }

    pub fn req<T>(&self, message: T) -> Request<T> {
        let mut r = Request::new(message);
        r.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        r
    }

    pub async fn create(&mut self, rules: pb::RuleSet) -> String {
        let r = self
            .api
            .create_table(self.req(pb::CreateTableRequest {
                request_id: uuid(),
                rules: Some(rules),
                seats: vec![],
                empty_seat_bots: None,
                ..Default::default()
            }))
            .await
            .expect("table created");
        r.into_inner().table.unwrap().name
    }

    pub async fn join(&mut self, table: &str, seat: i32) -> pb::SeatView {
        self.api
            .join_seat(self.req(pb::JoinSeatRequest {
                request_id: uuid(),
                table: table.to_owned(),
                seat: Some(seat),
            }))
            .await
            .expect("joined")
            .into_inner()
            .view
            .unwrap()
    }

    /// GetTable: the table as this caller may read it, with its seats' presence.
    pub async fn table(&mut self, table: &str) -> Result<pb::Table, Status> {
        Ok(self
            .api
            .get_table(self.req(pb::GetTableRequest {
                name: table.to_owned(),
            }))
            .await?
            .into_inner()
            .table
            .expect("GetTable answers a table"))
    }

    /// ListLegalActions: the commands this caller may make now.
    pub async fn legal_actions(&mut self, table: &str) -> Result<Vec<pb::LegalAction>, Status> {
        Ok(self
            .api
            .list_legal_actions(self.req(pb::ListLegalActionsRequest {
                table: table.to_owned(),
            }))
            .await?
            .into_inner()
            .actions)
    }

    pub async fn view(&mut self, table: &str) -> Result<pb::SeatView, Status> {
        self.view_as(table, pb::SeatViewForm::Unspecified).await
    }

    pub async fn view_as(
        &mut self,
        table: &str,
        form: pb::SeatViewForm,
    ) -> Result<pb::SeatView, Status> {
        self.view_at_least(table, form, None).await
    }

    /// The view at `min_version` or later (see `GetSeatViewRequest.min_version`).
    pub async fn view_at_least(
        &mut self,
        table: &str,
        form: pb::SeatViewForm,
        min_version: Option<i64>,
    ) -> Result<pb::SeatView, Status> {
        Ok(self
            .api
            .get_seat_view(self.req(pb::GetSeatViewRequest {
                table: table.to_owned(),
                view_form: form as i32,
                min_version,
            }))
            .await?
            .into_inner()
            .view
            .unwrap())
    }

    pub async fn submit(
        &mut self,
        table: &str,
        request_id: &str,
        command: pb::Command,
    ) -> Result<pb::SubmitCommandResponse, Status> {
        self.submit_as(table, request_id, command, pb::SeatViewForm::Unspecified)
            .await
    }

    pub async fn submit_as(
        &mut self,
        table: &str,
        request_id: &str,
        command: pb::Command,
        form: pb::SeatViewForm,
    ) -> Result<pb::SubmitCommandResponse, Status> {
        Ok(self
            .api
            .submit_command(self.req(pb::SubmitCommandRequest {
                request_id: request_id.to_owned(),
                table: table.to_owned(),
                command: Some(command),
                expected_version: None,
                view_form: form as i32,
            }))
            .await?
            .into_inner())
    }
}

/// A fresh request id.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The engine's view inside a wire view.
pub fn engine_view(v: &pb::SeatView) -> SeatView {
    serde_json::from_str(&v.engine_view).expect("engine_view is a SeatView")
}

/// Classic rules with a match of `hands` hands.
pub fn rules(hands: i32) -> pb::RuleSet {
    pb::RuleSet {
        preset: "classic".into(),
        match_length: Some(pb::MatchLength {
            length: Some(pb::match_length::Length::Hands(hands)),
        }),
        ..Default::default()
    }
}

/// Four players at a new table, seats 0-3, the first hand dealt.
pub async fn seated_table(
    channel: Channel,
    settings: &Settings,
    hands: i32,
) -> (String, Vec<Client>) {
    let mut admin = Client::new(channel.clone(), settings, "admin", &["admin"]);
    let table = admin.create(rules(hands)).await;
    let mut clients = Vec::new();
    for seat in 0..4 {
        let mut c = Client::new(
            channel.clone(),
            settings,
            &format!("p{seat}-{}", uuid()),
            &["player"],
        );
        c.join(&table, seat).await;
        clients.push(c);
    }
    (table, clients)
}
