//! Garbage in, precise errors out: every RPC of the four services, called with requests built
//! from its input message's descriptor (`okey_proto::FILE_DESCRIPTOR_SET`) by a fixed-seed
//! generator and sent as raw bytes, without a token, with a player's and with one holding every
//! role. Fields are set or not, strings come from a pool of edge cases and resource names (a live
//! table's among them, so the rules are reached), page tokens in the called service's own forms
//! with edge values inside, numbers and enums from their edges, messages nest, and some requests
//! carry a wrong wire type, an unknown field, truncated, oversized or random bytes.
//!
//! Whatever the bytes, a failed call must follow common.proto's error model: never INTERNAL,
//! UNKNOWN, UNAVAILABLE, DATA_LOSS or DEADLINE_EXCEEDED; `ErrorInfo` in domain `okey.v1` with a
//! reason of common.proto's table, sent with that reason's code; INVALID_ARGUMENT with a
//! `BadRequest` (or the reason `malformed_request` / `request_too_large`). A call may succeed
//! (a random request can be valid). Every violation is collected and the test fails once, with
//! all of them. Same seed, same requests: a failure reproduces.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::platform::{Layout, Platform};
use okey_platform::auth::Role;
use okey_platform::status::{ERROR_DOMAIN, Reason};
use okey_platform::testing::{TestInfra, connect, raw_server_streaming, raw_unary, test_token};
use okey_proto::v1 as pb;
use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorSet};
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

/// The generator's seed: change it to explore, keep it to reproduce.
const SEED: u64 = 0x0101_0C3E_7A61_2B1E;
/// Requests per method; each is sent with every [`Token`].
const CASES: usize = 100;
/// Methods called at once.
const PARALLEL_METHODS: usize = 6;
/// Cases of one method sent at once (each with every token).
const CASES_AT_ONCE: usize = 4;
/// How long a stream may stay silent before it counts as open and healthy.
const STREAM_WAIT: Duration = Duration::from_secs(2);
/// A call that has no answer after this long has hung (reported as DEADLINE_EXCEEDED).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The seated player's id (a fixed UUID, so requests naming it are the same every run).
const PLAYER_ID: &str = "6a1f2d3c-4b5e-4f60-8a71-92b3c4d5e6f7";
/// The id of the caller holding every role.
const OPERATOR_ID: &str = "0f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f";

/// Codes a malformed request must never get.
const FORBIDDEN: [Code; 5] = [
    Code::Internal,
    Code::Unknown,
    Code::Unavailable,
    Code::DataLoss,
    Code::DeadlineExceeded,
];

/// Who calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Token {
    None,
    Player,
    EveryRole,
}

impl Token {
    const ALL: [Token; 3] = [Token::None, Token::Player, Token::EveryRole];

    fn bearer(self) -> Option<String> {
        match self {
            Token::None => None,
            Token::Player => Some(test_token(PLAYER_ID, &[Role::Player])),
            Token::EveryRole => Some(test_token(OPERATOR_ID, &Role::ALL)),
        }
    }
}

// ---- The contract's descriptors ------------------------------------------------------------

/// Messages and enums of the contract by full name (`.okey.v1.RuleSet`).
#[derive(Default)]
struct Schema {
    messages: HashMap<String, DescriptorProto>,
    enums: HashMap<String, Vec<i32>>,
}

impl Schema {
    fn add_message(&mut self, scope: &str, message: &DescriptorProto) {
        let name = format!("{scope}.{}", message.name());
        for nested in &message.nested_type {
            self.add_message(&name, nested);
        }
        for e in &message.enum_type {
            self.enums.insert(
                format!("{name}.{}", e.name()),
                e.value.iter().map(|v| v.number()).collect(),
            );
        }
        self.messages.insert(name, message.clone());
    }
}

/// One RPC: its path, input message and whether it streams its answer.
#[derive(Clone, Debug)]
struct Method {
    service: String,
    path: &'static str,
    input: String,
    streaming: bool,
}

/// The schema, and every method of the four services in the contract's order.
fn contract() -> (Schema, Vec<Method>) {
    let set = FileDescriptorSet::decode(okey_proto::FILE_DESCRIPTOR_SET)
        .expect("the descriptor set decodes");
    let services = [
        okey_proto::service_names::ACCOUNTS,
        okey_proto::service_names::MATCHMAKING,
        okey_proto::service_names::TABLE,
        okey_proto::service_names::SCORING,
    ];
    let mut schema = Schema::default();
    let mut methods = Vec::new();
    for file in &set.file {
        let scope = match file.package() {
            "" => String::new(),
            package => format!(".{package}"),
        };
        for message in &file.message_type {
            schema.add_message(&scope, message);
        }
        for e in &file.enum_type {
            schema.enums.insert(
                format!("{scope}.{}", e.name()),
                e.value.iter().map(|v| v.number()).collect(),
            );
        }
        for service in &file.service {
            let full = format!("{}.{}", file.package(), service.name());
            if !services.contains(&full.as_str()) {
                continue;
            }
            for method in &service.method {
                assert!(!method.client_streaming(), "{full}/{}", method.name());
                // Leaked once per method: raw calls take a static path, as generated clients do.
                let path: &'static str =
                    Box::leak(format!("/{full}/{}", method.name()).into_boxed_str());
                methods.push(Method {
                    service: full.clone(),
                    path,
                    input: method.input_type().to_owned(),
                    streaming: method.server_streaming(),
                });
            }
        }
    }
    for service in services {
        assert!(
            methods.iter().any(|m| m.service == service),
            "no method of {service} in the descriptor set"
        );
    }
    (schema, methods)
}

// ---- A deterministic generator -------------------------------------------------------------

/// splitmix64: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True one time in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | ((b >> 48) & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    fn tile(&mut self) -> String {
        let tile = |rng: &mut Rng| {
            if rng.one_in(14) {
                "F".to_owned()
            } else {
                format!("{}{}", rng.pick(&["R", "Y", "B", "K"]), 1 + rng.below(13))
            }
        };
        match self.below(10) {
            0 => format!("{}={}", tile(self), tile(self)),
            1 => self
                .pick(&["R0", "R14", "Z3", "r7", "K13=", "=Y2", "F=F", "R7 "])
                .to_string(),
            _ => tile(self),
        }
    }
}

/// FNV-1a, to give each method a seed of its own from [`SEED`].
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Base64url without padding (scoring's page tokens).
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

// ---- The protobuf wire format, by hand -----------------------------------------------------

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const FIXED32: u8 = 5;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, number: u32, wire: u8) {
    varint(out, (u64::from(number) << 3) | u64::from(wire));
}

fn len_delimited(out: &mut Vec<u8>, bytes: &[u8]) {
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn wire_of(ty: Type) -> u8 {
    match ty {
        Type::Double | Type::Fixed64 | Type::Sfixed64 => FIXED64,
        Type::Float | Type::Fixed32 | Type::Sfixed32 => FIXED32,
        Type::String | Type::Bytes | Type::Message => LEN,
        Type::Group => START_GROUP,
        _ => VARINT,
    }
}

/// Requests built from the contract.
struct Generator<'a> {
    schema: &'a Schema,
    /// The service called (page tokens take its forms).
    service: &'a str,
    rng: Rng,
    /// Names that exist on the platform (the live table, the callers).
    known: &'a [String],
}

impl Generator<'_> {
    /// One request for `input`: mostly a message of that type, sometimes spoiled.
    fn request(&mut self, input: &str) -> Vec<u8> {
        match self.rng.below(100) {
            0..=4 => {
                let n = self.rng.below(64) as usize;
                self.rng.bytes(n)
            }
            5..=11 => {
                let mut bytes = self.message(input, 0);
                let keep = self.rng.below(bytes.len() as u64) as usize;
                bytes.truncate(keep);
                bytes
            }
            12..=15 => {
                let mut bytes = self.message(input, 0);
                if !bytes.is_empty() {
                    let at = self.rng.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << self.rng.below(8);
                }
                bytes
            }
            16..=17 => {
                // Over the 64 KiB every service accepts, in an unknown field.
                let mut bytes = self.message(input, 0);
                key(&mut bytes, 4_000, LEN);
                len_delimited(&mut bytes, &vec![b'x'; 70_000]);
                bytes
            }
            _ => self.message(input, 0),
        }
    }

    fn message(&mut self, type_name: &str, depth: u32) -> Vec<u8> {
        let schema = self.schema;
        let Some(message) = schema.messages.get(type_name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut fields: Vec<&FieldDescriptorProto> = message.field.iter().collect();
        if self.rng.one_in(8) {
            fields.reverse();
        }
        for field in fields {
            // Names and request ids are mostly set, so the checks behind them are reached.
            let left_out_one_in = match field.name() {
                "request_id" | "table" | "name" | "page_token" => 8,
                _ => 2,
            };
            if self.rng.one_in(left_out_one_in) {
                continue;
            }
            self.field(field, depth, &mut out);
        }
        if self.rng.one_in(20) {
            self.unknown_field(message, &mut out);
        }
        out
    }

    fn field(&mut self, field: &FieldDescriptorProto, depth: u32, out: &mut Vec<u8>) {
        let number = field.number() as u32;
        let ty = field.r#type();
        if self.rng.one_in(40) {
            let wrong: Vec<u8> = [VARINT, FIXED64, LEN, START_GROUP, FIXED32]
                .into_iter()
                .filter(|w| *w != wire_of(ty))
                .collect();
            let wire = *self.rng.pick(&wrong);
            self.any_value(number, wire, out);
            return;
        }
        if field.label() != Label::Repeated {
            key(out, number, wire_of(ty));
            self.payload(field, depth, out);
            return;
        }
        let count = if depth == 0 && self.rng.one_in(25) {
            300
        } else {
            self.rng.below(4)
        };
        let packable = !matches!(ty, Type::String | Type::Bytes | Type::Message | Type::Group);
        if packable && count > 0 && self.rng.one_in(2) {
            let mut packed = Vec::new();
            for _ in 0..count {
                self.payload(field, depth, &mut packed);
            }
            key(out, number, LEN);
            len_delimited(out, &packed);
        } else {
            for _ in 0..count {
                key(out, number, wire_of(ty));
                self.payload(field, depth, out);
            }
        }
    }

    /// The value of `field` without its key.
    fn payload(&mut self, field: &FieldDescriptorProto, depth: u32, out: &mut Vec<u8>) {
        let ty = field.r#type();
        match ty {
            Type::String => {
                let text = self.text(field.name());
                len_delimited(out, &text);
            }
            Type::Bytes => {
                let n = self.rng.below(40) as usize;
                let bytes = self.rng.bytes(n);
                len_delimited(out, &bytes);
            }
            Type::Message => {
                let nested = if depth < 3 {
                    self.message(field.type_name(), depth + 1)
                } else {
                    Vec::new()
                };
                len_delimited(out, &nested);
            }
            Type::Enum => {
                let schema = self.schema;
                let mut values = schema
                    .enums
                    .get(field.type_name())
                    .cloned()
                    .unwrap_or_default();
                values.extend([99, -1]);
                varint(out, i64::from(*self.rng.pick(&values)) as u64);
            }
            Type::Bool => varint(out, *self.rng.pick(&[0, 1, 1, 2])),
            Type::Double | Type::Fixed64 | Type::Sfixed64 => {
                let v = self.int() as u64;
                out.extend_from_slice(&v.to_le_bytes());
            }
            Type::Float | Type::Fixed32 | Type::Sfixed32 => {
                let v = self.int() as u32;
                out.extend_from_slice(&v.to_le_bytes());
            }
            Type::Sint32 | Type::Sint64 => {
                let v = self.int();
                varint(out, ((v << 1) ^ (v >> 63)) as u64);
            }
            Type::Group => key(out, field.number() as u32, END_GROUP),
            _ => varint(out, self.int() as u64),
        }
    }

    fn int(&mut self) -> i64 {
        const EDGES: [i64; 17] = [
            0,
            1,
            -1,
            2,
            3,
            4,
            5,
            13,
            64,
            101,
            1_000,
            i32::MAX as i64,
            i32::MIN as i64,
            u32::MAX as i64,
            i64::MAX,
            i64::MIN,
            -4,
        ];
        if self.rng.one_in(5) {
            (self.rng.next() as i64) >> self.rng.below(64)
        } else {
            *self.rng.pick(&EDGES)
        }
    }

    /// A field of any wire type, with a well-formed value of that type.
    fn any_value(&mut self, number: u32, wire: u8, out: &mut Vec<u8>) {
        key(out, number, wire);
        match wire {
            VARINT => varint(out, self.int() as u64),
            FIXED64 => out.extend_from_slice(&self.rng.next().to_le_bytes()),
            FIXED32 => out.extend_from_slice(&(self.rng.next() as u32).to_le_bytes()),
            START_GROUP => key(out, number, END_GROUP),
            _ => {
                let text = self.text("");
                len_delimited(out, &text);
            }
        }
    }

    /// A field number `message` does not declare.
    fn unknown_field(&mut self, message: &DescriptorProto, out: &mut Vec<u8>) {
        let number = loop {
            let n = if self.rng.one_in(4) {
                536_870_911
            } else {
                16 + self.rng.below(2_000) as u32
            };
            if !message.field.iter().any(|f| f.number() as u32 == n) {
                break n;
            }
        };
        let wire = *self.rng.pick(&[VARINT, FIXED64, LEN, START_GROUP, FIXED32]);
        self.any_value(number, wire, out);
    }

    /// Text for a field named `field`: mostly what such a field holds (a table name for `table`,
    /// tiles for `tiles`), otherwise anything from the pool.
    fn text(&mut self, field: &str) -> Vec<u8> {
        if self.rng.one_in(30) {
            // Not UTF-8: the request does not decode.
            return self
                .rng
                .pick(&[
                    &b"\xff\xfe"[..],
                    b"a\xc3",
                    b"players/\xed\xa0\x80",
                    b"\xc0\x80",
                ])
                .to_vec();
        }
        if !self.rng.one_in(4)
            && let Some(text) = self.text_for(field)
        {
            return text.into_bytes();
        }
        self.any_text().into_bytes()
    }

    fn text_for(&mut self, field: &str) -> Option<String> {
        let rng = &mut self.rng;
        Some(match field {
            "table" => match rng.below(8) {
                0..=3 => self
                    .known
                    .iter()
                    .find(|n| n.starts_with("tables/"))
                    .cloned()
                    .unwrap_or_default(),
                4 => format!("tables/{}", rng.uuid().to_uppercase()),
                _ => format!("tables/{}", rng.uuid()),
            },
            "player" | "parent" | "host" | "members" => match rng.below(5) {
                0 => rng.pick(self.known).clone(),
                1 => "players/me".to_owned(),
                2 => "players/-".to_owned(),
                _ => format!("players/{}", rng.uuid()),
            },
            "name" => {
                if rng.one_in(3) {
                    return Some(rng.pick(self.known).clone());
                }
                let prefix = rng.pick(&["players", "tables", "rooms", "tickets", "matches"]);
                format!("{prefix}/{}", rng.uuid())
            }
            "request_id" => match rng.below(3) {
                0 => format!("r{}", rng.below(1_000)),
                _ => rng.uuid(),
            },
            "tile" | "tiles" => rng.tile(),
            "seed" => (0..64)
                .map(|_| char::from(*rng.pick(b"0123456789abcdefABCDEF")))
                .collect(),
            "preset" => rng
                .pick(&["classic", "Classic", "fast", "nope"])
                .to_string(),
            "password" | "client_secret" => "p".repeat(1 + rng.below(70) as usize),
            "username" | "device_id" | "code" | "client_id" => (0..rng.below(40))
                .map(|_| char::from(*rng.pick(b"abcXYZ019_-")))
                .collect(),
            "page_token" => self.page_token(),
            _ => return None,
        })
    }

    /// A page token shaped as the positions the called service pages by (matchmaking's lobby
    /// `{µs}_{uuid}`; the table's hand history `h{hand}.v{version}` and audit log `r{id}`, and
    /// scoring's JSON positions, which those services now seal with an HMAC, so these must be
    /// refused unsealed), with edge values: times at the ends of what chrono and PostgreSQL
    /// hold, extreme numbers, a NUL in a name.
    fn page_token(&mut self) -> String {
        const TIMES: [i64; 6] = [
            0,
            -1,
            // 262142-12-15, days before chrono's last date.
            8_210_265_408_000_000_000,
            // -262143-01-01, chrono's first date, a Wednesday.
            -8_334_601_315_200_000_000,
            // -100000-01-01: chrono holds it, PostgreSQL does not.
            -3_217_862_419_200_000_000,
            // 10000-01-01.
            253_402_300_800_000_000,
        ];
        const NUMBERS: [i64; 5] = [0, -1, 1, i64::MIN, i64::MAX];
        let rng = &mut self.rng;
        let time = *rng.pick(&TIMES);
        let (a, b) = (*rng.pick(&NUMBERS), *rng.pick(&NUMBERS));
        let player = rng.pick(self.known).clone();
        let text = rng
            .pick(&["", "a\\u0000b", "players/-", player.as_str()])
            .to_string();
        let uuid = rng.uuid();
        let forms = match self.service {
            okey_proto::service_names::MATCHMAKING => 0..1,
            okey_proto::service_names::TABLE => 1..3,
            okey_proto::service_names::SCORING => 3..7,
            _ => 0..7,
        };
        let form = if rng.one_in(6) {
            7
        } else {
            forms.start + rng.below(forms.end - forms.start)
        };
        let json = match form {
            0 => return format!("{time}_{uuid}"),
            1 => {
                let version = rng.pick(&["0", "1", "18446744073709551615", "9223372036854775808"]);
                return format!("h{}.v{version}", rng.below(3));
            }
            2 => return format!("r{a}"),
            3 => format!(r#"{{"k":"ledger","parent":"{text}","m":null,"below":{a}}}"#),
            4 => format!(
                r#"{{"k":"results","player":"{player}","ended_at":{time},"match_id":"{uuid}"}}"#
            ),
            5 => format!(
                r#"{{"k":"board","period":"{}","starts":{time},"min":{},"around":{},"key":{{"o":{a},"n":{b},"p":"{text}"}}}}"#,
                rng.pick(&["all", "day", "week", "month"]),
                rng.pick(&[0, 1, 10]),
                rng.one_in(2),
            ),
            6 => format!(
                r#"{{"k":"standings","from":{time},"to":{time},"won":{a},"mean":0.5,"played":{b},"player":"{text}"}}"#
            ),
            _ => return rng.pick(&["", "AAAA", "e30", "Zm9v", "!!"]).to_string(),
        };
        base64url(json.as_bytes())
    }

    fn any_text(&mut self) -> String {
        let rng = &mut self.rng;
        match rng.below(24) {
            0 => String::new(),
            1 => "a".to_owned(),
            2 => "x".repeat(70),
            3 => "y".repeat(5_000),
            4 => "Ayşe 🀄 çay ıİ".to_owned(),
            5 => "a\0b".to_owned(),
            6 => "\u{1}\t\n\u{7f}\u{9f}".to_owned(),
            7 => "players/".to_owned(),
            8 => "players/me".to_owned(),
            9 => format!("players/{}", rng.uuid()),
            10 => format!("tables/{}", rng.uuid()),
            11 => "rooms/x".to_owned(),
            12 => format!("matches/{}", rng.uuid()),
            13 => format!("tables/{}", rng.uuid().to_uppercase()),
            14 => rng.uuid().to_uppercase(),
            15 => rng.uuid(),
            16 => rng.tile(),
            17 => rng.pick(self.known).clone(),
            18 => format!("rooms/{}", rng.uuid()),
            19 => format!("tickets/{}", rng.uuid()),
            20 => "players/../tables/x".to_owned(),
            21 => " ".to_owned(),
            _ => (0..rng.below(20))
                .map(|_| char::from(32 + rng.below(95) as u8))
                .collect(),
        }
    }
}

// ---- Calls and judgement -------------------------------------------------------------------

/// What a call answered: `None` for a success (or a stream open without error).
async fn call(channel: Channel, method: &Method, token: Token, bytes: Vec<u8>) -> Option<Status> {
    let mut request = tonic::Request::new(bytes);
    request.set_timeout(CALL_TIMEOUT);
    if let Some(token) = token.bearer() {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("an ASCII token"),
        );
    }
    let answer = async {
        if !method.streaming {
            return raw_unary(channel, method.path, request).await.err();
        }
        let mut stream = match raw_server_streaming(channel, method.path, request).await {
            Ok(stream) => stream,
            Err(status) => return Some(status),
        };
        match tokio::time::timeout(STREAM_WAIT, stream.message()).await {
            Ok(Err(status)) => Some(status),
            // A first message, the end of the stream, or an open stream.
            _ => None,
        }
    };
    match tokio::time::timeout(CALL_TIMEOUT + Duration::from_secs(5), answer).await {
        Ok(answer) => answer,
        Err(_) => Some(Status::deadline_exceeded("no answer: the call hung")),
    }
}

/// What is wrong with a refusal, by common.proto's error model (empty: nothing).
fn problems(status: &Status) -> Vec<String> {
    let mut wrong = Vec::new();
    let code = status.code();
    if FORBIDDEN.contains(&code) {
        wrong.push(format!("code {code:?} for a malformed request"));
    }
    let details = status.get_error_details();
    let reason = match details.error_info() {
        None => {
            wrong.push("no ErrorInfo".to_owned());
            String::new()
        }
        Some(info) => {
            if info.domain != ERROR_DOMAIN {
                wrong.push(format!("ErrorInfo domain `{}`", info.domain));
            }
            match Reason::ALL.iter().find(|r| r.as_str() == info.reason) {
                _ if info.reason.is_empty() => wrong.push("empty reason".to_owned()),
                None => wrong.push(format!(
                    "reason `{}` is not in common.proto's table",
                    info.reason
                )),
                Some(r) if r.code() != code => wrong.push(format!(
                    "reason `{}` sent with {code:?}, common.proto says {:?}",
                    info.reason,
                    r.code()
                )),
                Some(_) => {}
            }
            info.reason.clone()
        }
    };
    if code == Code::InvalidArgument
        && details.bad_request().is_none()
        && !matches!(reason.as_str(), "malformed_request" | "request_too_large")
    {
        wrong.push("INVALID_ARGUMENT without BadRequest".to_owned());
    }
    wrong
}

/// One call that broke the error model.
struct Violation {
    case: usize,
    request: Vec<u8>,
    status: Status,
}

/// Per method and caller: how the calls ended, and the violations.
#[derive(Default)]
struct Tally {
    ok: usize,
    reasons: BTreeMap<String, usize>,
    /// (problems, code, reason) → the calls.
    violations: BTreeMap<(String, String, String), Vec<Violation>>,
}

fn hex(bytes: &[u8]) -> String {
    const SHOWN: usize = 160;
    let shown: String = bytes
        .iter()
        .take(SHOWN)
        .map(|b| format!("{b:02x}"))
        .collect();
    if bytes.len() > SHOWN {
        format!("{shown}… ({} bytes)", bytes.len())
    } else {
        shown
    }
}

fn reason_of(status: &Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_else(|| "-".to_owned())
}

/// Every case of `method`, each sent with every token.
async fn run_method(
    channel: Channel,
    method: Method,
    schema: Arc<Schema>,
    known: Arc<Vec<String>>,
) -> (Method, Duration, BTreeMap<Token, Tally>) {
    let started = Instant::now();
    let mut generator = Generator {
        schema: &schema,
        service: &method.service,
        rng: Rng(SEED ^ fnv(method.path)),
        known: &known,
    };
    // The first case of every method is the empty message: every field left unset.
    let requests: Vec<Vec<u8>> = (0..CASES)
        .map(|case| match case {
            0 => Vec::new(),
            _ => generator.request(&method.input),
        })
        .collect();
    // A few cases at once, each with every token: sign-in answers slowly on purpose after a few
    // failures. The answers are read in case order, so the report is the same every run.
    let mut answers = Vec::with_capacity(CASES * Token::ALL.len());
    for (chunk, batch) in requests.chunks(CASES_AT_ONCE).enumerate() {
        let mut calls = tokio::task::JoinSet::new();
        for (i, request) in batch.iter().enumerate() {
            for token in Token::ALL {
                let (channel, method, request) = (channel.clone(), method.clone(), request.clone());
                let case = chunk * CASES_AT_ONCE + i;
                calls.spawn(
                    async move { (case, token, call(channel, &method, token, request).await) },
                );
            }
        }
        answers.extend(calls.join_all().await);
    }
    answers.sort_by_key(|(case, token, _)| (*case, *token));
    let mut tallies: BTreeMap<Token, Tally> = BTreeMap::new();
    for (case, token, answer) in answers {
        let tally = tallies.entry(token).or_default();
        let Some(status) = answer else {
            tally.ok += 1;
            continue;
        };
        let reason = reason_of(&status);
        *tally
            .reasons
            .entry(format!("{:?} {reason}", status.code()))
            .or_default() += 1;
        let wrong = problems(&status);
        if !wrong.is_empty() {
            tally
                .violations
                .entry((wrong.join("; "), format!("{:?}", status.code()), reason))
                .or_default()
                .push(Violation {
                    case,
                    request: requests[case].clone(),
                    status,
                });
        }
    }
    (method, started.elapsed(), tallies)
}

/// A table with the player at seat 0 and bots on the others (so its match is under way), made
/// by the operator with a fixed request id: its name is the same every run.
async fn live_table(channel: Channel) -> String {
    let mut request = tonic::Request::new(pb::CreateTableRequest {
        request_id: "garbage-live-table".to_owned(),
        seats: vec![pb::SeatAssignment {
            seat: 0,
            occupant: Some(pb::seat_assignment::Occupant::Player(format!(
                "players/{PLAYER_ID}"
            ))),
            ..Default::default()
        }],
        empty_seat_bots: Some(pb::BotLevel::Easy as i32),
        ..Default::default()
    });
    let token = Token::EveryRole.bearer().expect("a token");
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("an ASCII token"),
    );
    pb::table_service_client::TableServiceClient::new(channel)
        .create_table(request)
        .await
        .expect("the live table is created")
        .into_inner()
        .table
        .expect("a table")
        .name
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_rpc_answers_garbage_with_a_precise_error() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let (schema, methods) = contract();
    let platform = Platform::start("garbage", &infra, Layout::default()).await;
    let within = Duration::from_secs(30);
    let channels: HashMap<&str, Channel> = HashMap::from([
        (
            okey_proto::service_names::ACCOUNTS,
            connect(platform.accounts.port, within).await,
        ),
        (
            okey_proto::service_names::MATCHMAKING,
            connect(platform.matchmaking.port, within).await,
        ),
        (
            okey_proto::service_names::TABLE,
            connect(platform.tables[0].port, within).await,
        ),
        (
            okey_proto::service_names::SCORING,
            connect(platform.scoring.port, within).await,
        ),
    ]);
    let table = live_table(channels[okey_proto::service_names::TABLE].clone()).await;
    let known = Arc::new(vec![
        table,
        format!("players/{PLAYER_ID}"),
        format!("players/{OPERATOR_ID}"),
    ]);
    let schema = Arc::new(schema);

    let started = Instant::now();
    let slots = Arc::new(tokio::sync::Semaphore::new(PARALLEL_METHODS));
    let mut running = tokio::task::JoinSet::new();
    for method in methods.iter().cloned() {
        let channel = channels[method.service.as_str()].clone();
        let (schema, known, slots) = (schema.clone(), known.clone(), slots.clone());
        running.spawn(async move {
            let _slot = slots.acquire_owned().await.expect("the semaphore is open");
            run_method(channel, method, schema, known).await
        });
    }
    let mut results = Vec::new();
    while let Some(done) = running.join_next().await {
        results.push(done.expect("a method's run finishes"));
    }
    results.sort_by_key(|(m, _, _)| m.path);
    let elapsed = started.elapsed();

    let calls = methods.len() * CASES * Token::ALL.len();
    let ok: usize = results
        .iter()
        .flat_map(|(_, _, t)| t.values())
        .map(|t| t.ok)
        .sum();
    println!(
        "garbage: {} methods x {CASES} requests x {} tokens = {calls} calls (seed {SEED:#x}) \
         in {elapsed:.1?}; {ok} succeeded",
        methods.len(),
        Token::ALL.len(),
    );
    for (method, took, tallies) in &results {
        println!("  {} in {took:.1?}", method.path);
        for (token, tally) in tallies {
            let reasons: Vec<String> = tally
                .reasons
                .iter()
                .map(|(r, n)| format!("{r} x{n}"))
                .collect();
            println!("    [{token:?}] ok x{}, {}", tally.ok, reasons.join(", "));
        }
    }

    let mut report = Vec::new();
    let mut count = 0;
    for (method, _, tallies) in &results {
        for (token, tally) in tallies {
            for ((wrong, code, reason), calls) in &tally.violations {
                count += calls.len();
                report.push(format!(
                    "{} [{token:?}] {code} `{reason}`: {wrong} — {} call(s)",
                    method.path,
                    calls.len()
                ));
                for v in calls.iter().take(3) {
                    report.push(format!(
                        "    case {}: request {}\n      -> {:?}: {}",
                        v.case,
                        hex(&v.request),
                        v.status.code(),
                        v.status.message().chars().take(300).collect::<String>()
                    ));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "{count} of {calls} calls broke the error model (seed {SEED:#x}):\n{}\n\nservice logs:\n{}",
        report.join("\n"),
        platform.log_tails(20)
    );
}
