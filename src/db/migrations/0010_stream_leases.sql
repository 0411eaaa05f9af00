-- Open streams per credential, shared by every process on the database (spec 8: 100 per API key). A
-- process renews its leases while their connections are open; a lease not renewed (its process died)
-- stops counting and is purged.
create table stream_leases (
  id uuid primary key,
  credential_key text not null,
  renewed_at timestamptz not null default now()
);
create index stream_leases_by_key on stream_leases (credential_key, renewed_at);
