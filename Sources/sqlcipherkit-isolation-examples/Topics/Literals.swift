import Foundation
import SqlCipherKit

// SQL literals (`SQL` interpolation): every entry point, with interpolated values, identifiers and
// lists, written as a user writes them in each isolation context: top-level code is in main.swift;
// here a @MainActor class, the caller's own actor and Task.detached. Each is written out in full on
// purpose: the closures must be formed in the context under test, so no shared helper can stand in
// for them.

@MainActor
final class LiteralsModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/literals-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-main-actor", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-main-actor", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-main-actor", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-main-actor", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-main-actor", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-main-actor", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-main-actor", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-main-actor")
            print("ok literals-main-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-pool-main-actor.db", key: "my-passphrase")
            let marker = self.marker
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-pool-main-actor", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-pool-main-actor", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-pool-main-actor", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-pool-main-actor", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-pool-main-actor", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-pool-main-actor", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-pool-main-actor", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-pool-main-actor")
            print("ok literals-pool-main-actor")
        }
    }
}

actor LiteralsService {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/literals-actor.db", key: "my-passphrase")
            let marker = self.marker
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-actor", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-actor", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-actor", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-actor", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-actor", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-actor", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-actor", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-actor")
            print("ok literals-actor")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-pool-actor.db", key: "my-passphrase")
            let marker = self.marker
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-pool-actor", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-pool-actor", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-pool-actor", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-pool-actor", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-pool-actor", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-pool-actor", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-pool-actor", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-pool-actor")
            print("ok literals-pool-actor")
        }
    }

    func report(_ fraction: Double) {
        self.fraction = fraction
    }
}

func literalsDetached(directory: String) async throws {
    try await Task.detached {
        // a Database
        do {
            let db = try Database(path: directory + "/literals-detached.db", key: "my-passphrase")
            let marker = "!"
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-detached", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-detached", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-detached", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-detached", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-detached", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-detached", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-detached", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-detached")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-pool-detached.db", key: "my-passphrase")
            let marker = "!"
            let table = "notes"
            let owner = "O'Brien\(marker); DROP TABLE notes; --"
            let ids = [1, 2, 3]
            let titles = ["note-1", "note-2", "note-3"]
            try await db.execute(literal: "CREATE TABLE \(identifier: table)(id INTEGER PRIMARY KEY, title TEXT NOT NULL, owner TEXT)")
            for id in ids {
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(id), \(titles[id - 1]), \(owner))")
            }
            let picked = try await db.query(literal: "SELECT title FROM \(identifier: table) WHERE owner = \(owner) AND id IN \(list: [1, 3]) ORDER BY id")
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-pool-detached", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-pool-detached", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-pool-detached", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-pool-detached", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-pool-detached", "conn.execute/fetch/query(literal:) \(written)")
            let (seen, counted, decoded) = try await db.read { conn in
                var seen: [Int] = []
                let cursor = try conn.cursor(literal: "SELECT id FROM \(identifier: table) WHERE id > \(2) ORDER BY id")
                while let row = try cursor.next() { seen.append(row.get(0, as: Int.self) ?? -1) }
                let byOwner = try conn.prepare(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = ?")
                let counted = try byOwner.query(owner)[0].get(0, as: Int.self) ?? -1
                var decoded: [String] = []
                try conn.cursor(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [1, 4]) ORDER BY id")
                    .forEach { decoded.append($0.title) }
                return (seen, counted, decoded)
            }
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-pool-detached", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-pool-detached", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            print("ok literals-pool-detached")
        }
    }.value
}
