/// One column of a table or view, as ``Connection/columns(in:schema:)`` reports it
/// (https://sqlite.org/pragma.html#pragma_table_xinfo).
///
/// ```swift
/// // CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT '',
/// //                    size INT GENERATED ALWAYS AS (length(body)) STORED)
/// let columns = try await db.columns(in: "notes")
/// // columns[1] == ColumnInfo(name: "body", declaredType: "TEXT", isNotNull: true,
/// //                          defaultValueSQL: "''", primaryKeyIndex: 0, kind: .ordinary)
/// // columns[2].kind == .generatedStored on SQLCipher 4 (SQLite 3.46); .unknown on SQLCipher 3.4.1
/// ```
public struct ColumnInfo: Sendable, Equatable {
    /// What kind of column SQLite says this is: the `hidden` field of `PRAGMA table_xinfo`.
    ///
    /// `PRAGMA table_xinfo` exists from SQLite 3.26; SQLCipher 3.4.1 is built on SQLite 3.15.2,
    /// which only has `PRAGMA table_info`. There every column's kind is ``unknown``: that pragma
    /// does not say it, and it leaves the hidden columns of virtual tables out of the list
    /// altogether (SQLite before 3.31 has no generated columns).
    public enum Kind: Sendable, Equatable {
        /// A column that stores what is written to it.
        case ordinary
        /// A hidden column of a virtual table (for example an FTS table's own-name column), which
        /// `SELECT *` does not return.
        case hidden
        /// A generated column computed when it is read (`GENERATED ALWAYS AS (…) VIRTUAL`,
        /// https://sqlite.org/gencol.html).
        case generatedVirtual
        /// A generated column computed when the row is written and stored with it
        /// (`GENERATED ALWAYS AS (…) STORED`).
        case generatedStored
        /// The loaded SQLite (before 3.26) cannot tell: see ``Kind``.
        case unknown
    }

    /// The column's name, as written in its `CREATE TABLE` (or the view's result column name).
    public let name: String
    /// The declared type as written (`"VARCHAR(20)"`, `"INTEGER"`), empty when the column was
    /// declared without a type. It decides the column's affinity (https://sqlite.org/datatype3.html).
    public let declaredType: String
    /// Whether the column has a `NOT NULL` constraint.
    public let isNotNull: Bool
    /// The `DEFAULT` as SQL text (`"'draft'"`, `"0"`, `"CURRENT_TIMESTAMP"`), nil without one.
    /// It is an expression, not a value: a text default keeps its quotes.
    public let defaultValueSQL: String?
    /// The column's position in the primary key, from 1; 0 when it is not part of the key.
    /// A table without a declared key reports 0 for every column (see ``PrimaryKeyInfo``).
    public let primaryKeyIndex: Int
    /// Ordinary, hidden or generated; ``Kind/unknown`` on SQLite before 3.26.
    public let kind: Kind

    /// A column description; the library's introspection creates these, tests compare with them.
    public init(name: String, declaredType: String, isNotNull: Bool, defaultValueSQL: String?,
                primaryKeyIndex: Int, kind: Kind) {
        self.name = name
        self.declaredType = declaredType
        self.isNotNull = isNotNull
        self.defaultValueSQL = defaultValueSQL
        self.primaryKeyIndex = primaryKeyIndex
        self.kind = kind
    }
}

/// One index of a table, as ``Connection/indexes(on:schema:)`` reports it
/// (https://sqlite.org/pragma.html#pragma_index_list and
/// https://sqlite.org/pragma.html#pragma_index_xinfo).
///
/// ```swift
/// // CREATE INDEX open_by_owner ON tasks(owner, lower(title) DESC) WHERE done = 0
/// let index = try await db.indexes(on: "tasks").first { $0.name == "open_by_owner" }!
/// // index.columns == [.init(name: "owner", isDescending: false, collation: "BINARY"),
/// //                   .init(name: nil, isDescending: true, collation: "BINARY")]
/// // index.isPartial == true, index.isUnique == false, index.origin == .createIndex
/// ```
public struct IndexInfo: Sendable, Equatable {
    /// How the index came to be (the `origin` field of `PRAGMA index_list`).
    public enum Origin: String, Sendable, Equatable {
        /// `CREATE INDEX` (`c`).
        case createIndex = "c"
        /// A `UNIQUE` constraint of the table (`u`): SQLite named it `sqlite_autoindex_…`.
        case uniqueConstraint = "u"
        /// The `PRIMARY KEY` of the table (`pk`): a key that is not the rowid, and the whole table
        /// of a `WITHOUT ROWID` table.
        case primaryKey = "pk"
    }

    /// One key column of an index, in index order.
    public struct Column: Sendable, Equatable {
        /// The table column's name; nil for an expression (`CREATE INDEX … ON t(lower(name))`):
        /// SQLite reports neither a name nor the expression's text for it. The expression is in the
        /// index's `CREATE INDEX` statement.
        public let name: String?
        /// Whether the column is sorted `DESC`.
        public let isDescending: Bool
        /// The collating sequence the index compares with (`"BINARY"` unless declared).
        public let collation: String

        /// An index column description.
        public init(name: String?, isDescending: Bool, collation: String) {
            self.name = name
            self.isDescending = isDescending
            self.collation = collation
        }
    }

    /// The index's name (`sqlite_autoindex_<table>_<n>` for those SQLite made for a constraint).
    public let name: String
    /// Whether the index enforces uniqueness.
    public let isUnique: Bool
    /// The key columns in index order (without the rowid or the primary-key columns SQLite
    /// appends to every entry).
    public let columns: [Column]
    /// Whether the index has a `WHERE` clause (https://sqlite.org/partialindex.html).
    public let isPartial: Bool
    /// `CREATE INDEX`, a `UNIQUE` constraint or the `PRIMARY KEY`.
    public let origin: Origin

    /// An index description.
    public init(name: String, isUnique: Bool, columns: [Column], isPartial: Bool, origin: Origin) {
        self.name = name
        self.isUnique = isUnique
        self.columns = columns
        self.isPartial = isPartial
        self.origin = origin
    }
}

/// The primary key of a table, as ``Connection/primaryKey(of:schema:)`` reports it
/// (https://sqlite.org/lang_createtable.html#rowid).
///
/// ```swift
/// // CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)
/// try await db.primaryKey(of: "notes")   // PrimaryKeyInfo(columns: ["id"], kind: .rowIDAlias)
/// // CREATE TABLE log(message TEXT)
/// try await db.primaryKey(of: "log")     // PrimaryKeyInfo(columns: ["rowid"], kind: .hiddenRowID)
/// // CREATE TABLE pairs(a TEXT, b TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID
/// try await db.primaryKey(of: "pairs")   // PrimaryKeyInfo(columns: ["a", "b"], kind: .withoutRowID)
/// ```
public struct PrimaryKeyInfo: Sendable, Equatable {
    /// What identifies a row of the table.
    public enum Kind: Sendable, Equatable {
        /// No declared key: the rowid identifies each row. ``PrimaryKeyInfo/columns`` holds the
        /// name it can be selected by.
        case hiddenRowID
        /// An `INTEGER PRIMARY KEY` column, which is the rowid under another name.
        case rowIDAlias
        /// A declared key that is not the rowid (a composite key, a non-integer key, or
        /// `INTEGER PRIMARY KEY DESC`): the table still has a separate rowid.
        case columns
        /// The declared key of a `WITHOUT ROWID` table (https://sqlite.org/withoutrowid.html).
        case withoutRowID
    }

    /// The key's columns in key order. For ``Kind/hiddenRowID``, the first of `rowid`, `_rowid_`
    /// and `oid` that no column of the table takes (empty when columns take all three, and the
    /// rowid cannot be named).
    public let columns: [String]
    /// What identifies a row.
    public let kind: Kind

    /// A primary-key description.
    public init(columns: [String], kind: Kind) {
        self.columns = columns
        self.kind = kind
    }

    /// Whether the key is the table's rowid (hidden or under an `INTEGER PRIMARY KEY` column).
    public var isRowID: Bool { kind == .hiddenRowID || kind == .rowIDAlias }
    /// Whether the table has a rowid at all: every table but a `WITHOUT ROWID` one.
    public var tableHasRowID: Bool { kind != .withoutRowID }
}

/// One foreign key of a table (a `REFERENCES` clause or a `FOREIGN KEY` constraint), as
/// ``Connection/foreignKeys(of:schema:)`` reports it
/// (https://sqlite.org/pragma.html#pragma_foreign_key_list).
///
/// ```swift
/// // CREATE TABLE lines(order_id INTEGER, n INTEGER,
/// //     FOREIGN KEY (order_id, n) REFERENCES slots(order_id, position) ON DELETE CASCADE)
/// let key = try await db.foreignKeys(of: "lines")[0]
/// // key.table == "slots", key.onDelete == .cascade, key.onUpdate == .noAction
/// // key.columns == [.init(from: "order_id", to: "order_id"), .init(from: "n", to: "position")]
/// ```
public struct ForeignKeyInfo: Sendable, Equatable {
    /// One column of the child table and the parent column it references.
    public struct ColumnPair: Sendable, Equatable {
        /// The column of this (the child) table.
        public let from: String
        /// The referenced column of the parent table; nil when the clause names no parent column
        /// (`REFERENCES parent`), which references the parent's primary key at this position
        /// (``Connection/primaryKey(of:schema:)`` of ``ForeignKeyInfo/table`` names it).
        public let to: String?

        /// A column pair.
        public init(from: String, to: String?) {
            self.from = from
            self.to = to
        }
    }

    /// SQLite's number for the key within its table (`id` of `PRAGMA foreign_key_list`).
    public let id: Int
    /// The parent table's name, as written in the clause (it is in the same schema).
    public let table: String
    /// The column pairs in the order of the clause.
    public let columns: [ColumnPair]
    /// What an update of the parent key does to the child rows.
    public let onUpdate: ForeignKeyAction
    /// What a delete of the parent row does to the child rows.
    public let onDelete: ForeignKeyAction

    /// A foreign-key description.
    public init(id: Int, table: String, columns: [ColumnPair], onUpdate: ForeignKeyAction, onDelete: ForeignKeyAction) {
        self.id = id
        self.table = table
        self.columns = columns
        self.onUpdate = onUpdate
        self.onDelete = onDelete
    }
}

/// A trigger of a schema, as ``Connection/triggers(schema:)`` reports it
/// (https://sqlite.org/schematab.html).
///
/// ```swift
/// let triggers = try await db.triggers()
/// // [TriggerInfo(name: "notes_touch", table: "notes")]
/// ```
public struct TriggerInfo: Sendable, Equatable {
    /// The trigger's name.
    public let name: String
    /// The table (or, for an `INSTEAD OF` trigger, the view) it fires on.
    public let table: String

    /// A trigger description.
    public init(name: String, table: String) {
        self.name = name
        self.table = table
    }
}
