-- A paused task gives its worker slot back: its workflow ends at a checkpoint ("parks") and is rewound
-- to that step on resume. The step id is what the rewind needs; null when the task is not parked.
alter table tasks add column parked_at_step integer;
create index tasks_parked on tasks (id) where parked_at_step is not null;
