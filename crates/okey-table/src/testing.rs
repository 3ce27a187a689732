//! Given/when/then for the table aggregate, for this crate's tests and any crate that tests code
//! over it (behind the `test-util` feature): *given* a table built from commands, *when* one more
//! command is decided, *then* the events it causes (by their stable names) or the reason it is
//! refused. Every step goes through `decide` and `apply`, the same path the service takes.

use okey_rules::RuleSet;

use crate::event::Seed;
use crate::table::{Decision, Table, TableCommand, TableError};

/// A table in a known state, and the seed the next deal will use.
#[derive(Clone, Debug)]
pub struct Given {
    pub table: Table,
    next_seed: u8,
}

/// A new table with `rules` and these occupants seated at creation (the fourth deals the first
/// hand from a fixed seed).
pub fn given_table(rules: RuleSet, seats: [Option<&str>; 4]) -> Given {
    let seats = seats.map(|s| s.map(str::to_owned));
    let decision = Table::create(rules, seats, &[1; 32]).expect("a valid table");
    let table = Table::replay(&decision.events, decision.seeds.iter().copied().collect());
    Given {
        table,
        next_seed: 2,
    }
}

impl Given {
    /// Decides and applies `command`, which must be accepted.
    pub fn and(mut self, command: TableCommand) -> Given {
        let seed = self.seed();
        let decision = self
            .table
            .decide(&command, &seed)
            .unwrap_or_else(|e| panic!("given {command:?}: refused with {}", e.code()));
        self.table.apply(&decision);
        self
    }

    /// Decides `command` against the table as it stands.
    pub fn when(&self, command: TableCommand) -> Then {
        let seed = self.clone().seed();
        Then {
            before: self.table.clone(),
            result: self.table.decide(&command, &seed),
        }
    }

    fn seed(&mut self) -> Seed {
        self.next_seed = self.next_seed.wrapping_add(1);
        [self.next_seed; 32]
    }
}

/// What one decision did.
#[derive(Debug)]
pub struct Then {
    before: Table,
    pub result: Result<Decision, TableError>,
}

impl Then {
    /// Asserts the command was accepted with events of exactly these names, in order; returns the
    /// table after them.
    pub fn then_events(self, names: &[&str]) -> Table {
        let decision = match self.result {
            Ok(d) => d,
            Err(e) => panic!("expected {names:?}, refused with {}", e.code()),
        };
        let got: Vec<&str> = decision.events.iter().map(|e| e.name()).collect();
        assert_eq!(got, names, "the events of the decision");
        let mut after = self.before;
        after.apply(&decision);
        after
    }

    /// Asserts the command was refused with this reason code.
    pub fn then_refused(self, code: &str) {
        match self.result {
            Ok(d) => panic!(
                "expected a refusal ({code}), got {:?}",
                d.events.iter().map(|e| e.name()).collect::<Vec<_>>()
            ),
            Err(e) => assert_eq!(e.code(), code, "the reason of the refusal"),
        }
    }
}
