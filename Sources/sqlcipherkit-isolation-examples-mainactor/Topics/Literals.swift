import Foundation
import SqlCipherKit

// SQL literals (`SQL` interpolation): every entry point, with interpolated values, identifiers and
// lists, in a class without annotation of a module whose default isolation is the main actor (top-
// level code is in main.swift). Written out in full on purpose: the closures must be formed in the
// context under test.

final class LiteralsModel {
    let marker = "!"
    var finished: [String] = []
    var fraction = 0.0

    func run(directory: String) async throws {
        // a Database
        do {
            let db = try Database(path: directory + "/literals-default-main-actor-class.db", key: "my-passphrase")
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
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-default-main-actor-class", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-default-main-actor-class", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-default-main-actor-class", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-default-main-actor-class", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-default-main-actor-class", "conn.execute/fetch/query(literal:) \(written)")
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
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-default-main-actor-class", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-default-main-actor-class", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-default-main-actor-class")
            print("ok literals-default-main-actor-class")
        }
        // a DatabasePool
        do {
            let db = try DatabasePool(path: directory + "/literals-default-main-actor-class-pool.db", key: "my-passphrase")
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
            try expect(picked.map { $0.get("title", as: String.self) } == ["note-1", "note-3"], "literals-default-main-actor-class-pool", "query(literal:) \(picked)")
            let fetched = try await db.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: ids) ORDER BY id")
            try expect(fetched.map(\.title) == titles, "literals-default-main-actor-class-pool", "fetch(_:literal:) \(fetched)")
            var streamed: [Int] = []
            for try await row in db.stream(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id", batchSize: 2) {
                streamed.append(row.get("id", as: Int.self) ?? -1)
            }
            try expect(streamed == ids, "literals-default-main-actor-class-pool", "stream(literal:) \(streamed)")
            var streamedTitles: [String] = []
            for try await note in db.stream(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id > \(1) ORDER BY id") {
                streamedTitles.append(note.title)
            }
            try expect(streamedTitles == ["note-2", "note-3"], "literals-default-main-actor-class-pool", "stream(_:literal:) \(streamedTitles)")
            let extra = "note-4"
            let written = try await db.transaction { conn in
                let changed = try conn.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(4), \(extra), \(owner))")
                let titles = try conn.fetch(NoteRow.self, literal: "SELECT id, title FROM \(identifier: table) WHERE id IN \(list: [4])").map(\.title)
                let count = try conn.query(literal: "SELECT count(*) FROM \(identifier: table) WHERE owner = \(owner)")[0].get(0, as: Int.self)
                return (changed, titles, count)
            }
            try expect(written.0 == 1 && written.1 == [extra] && written.2 == 4, "literals-default-main-actor-class-pool", "conn.execute/fetch/query(literal:) \(written)")
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
            try expect(seen == [3, 4] && counted == 4 && decoded == ["note-1", extra], "literals-default-main-actor-class-pool", "cursor/prepare(literal:) \(seen) \(counted) \(decoded)")
            for try await rows in db.values(of: .query(literal: "SELECT id FROM \(identifier: table) WHERE owner = \(owner) ORDER BY id")) {
                if rows.count == 5 { break }
                try await db.execute(literal: "INSERT INTO \(identifier: table)(id, title, owner) VALUES (\(5), \("note-5"), \(owner))")
            }
            let firstTag = "swift\(marker)"
            try await db.migrate([CreateTagsTable(table: "tags", first: firstTag)])
            let tags = try await db.query(literal: "SELECT name FROM \(identifier: "tags")").map { $0.get(0, as: String.self) }
            try expect(tags == [firstTag], "literals-default-main-actor-class-pool", "MigrationContext.execute(literal:) \(tags)")
            await db.close()
            finished.append("literals-default-main-actor-class-pool")
            print("ok literals-default-main-actor-class-pool")
        }
    }
}
