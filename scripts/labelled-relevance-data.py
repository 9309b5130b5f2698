#!/usr/bin/env python3
"""Writes the labelled answer-relevance and passage-relevance sets
(tests/labelled_relevance, tests/labelled_passages) from the items below, split
dev/test by a rule that looks at nothing but the questions' ids: ordered by the
SHA-256 of the id, the questions go to dev and test in turn (15 each). Every label is a person's (the author's),
with a note saying why it holds; the hard cases are on purpose.

Answer labels: `relevant` (it answers the question, whether or not it is true,
however padded), `partial` (it answers part of a question that asks for more),
`irrelevant` (it evades, refuses, restates the question, or answers about a
neighbouring product, plan or rule). Passage labels: `relevant` (it holds
information that helps answer the question), `not_relevant` (it does not,
however many words it shares with it).

    scripts/labelled-relevance-data.py
"""
import hashlib, json, os

R, P, I = 'relevant', 'partial', 'irrelevant'
Y, N = 'relevant', 'not_relevant'

# (id, area, question, [(response, label, note)], [(passage, label, note)])
ITEMS = [
 ('refund-window', 'refunds', 'How many days do I have to return an unused item for a refund?', [
   ('You have 30 days from delivery to return an unused item for a full refund.', R, 'Direct answer.'),
   ('Thanks for shopping with us! We love our customers and our summer sale starts soon. Anyway, returns are accepted for 30 days after delivery. Follow us for deals!', R, 'Padded, but it answers the question.'),
   ('You have 14 days to return an unused item.', R, 'Wrong number, but it answers the question (relevance is not truth).'),
   ('Gift cards cannot be returned or refunded.', I, 'About gift cards, not the return window.'),
   ('For questions about returns, please contact our support team.', I, 'An evasion.'),
  ], [
   ('Unused items may be returned within 30 days of delivery for a full refund.', Y, 'States the window.'),
   ('Gift cards are not refundable and cannot be exchanged for cash.', N, 'Shares "refund" but is about gift cards.'),
   ('Refunds are paid to the original payment method within 5 business days of receiving the return.', N, 'When the money arrives, not how long one has to return.'),
   ('Our stores are open from 9 am to 6 pm, Monday to Saturday.', N, 'Unrelated.'),
  ]),
 ('refund-method', 'refunds', 'How is my refund paid back to me?', [
   ('The refund goes back to the card or account you paid with.', R, 'Direct answer.'),
   ('Refunds are paid as store credit only.', R, 'Possibly wrong, but answers how.'),
   ('You can return items within 30 days of delivery.', I, 'Answers a neighbouring question (the window).'),
   ('Your refund will be processed.', I, 'Restates the topic without saying how.'),
  ], [
   ('Refunds are issued to the original payment method.', Y, 'Answers it.'),
   ('Store credit is offered for returns without a receipt.', Y, 'A case of how refunds are paid.'),
   ('Items must be unused and in their original packaging to be returned.', N, 'Conditions of return, not payment.'),
   ('Shipping is free on orders over 50 dollars.', N, 'Unrelated.'),
  ]),
 ('express-shipping', 'shipping', 'How much does express shipping cost and how fast is it?', [
   ('Express shipping costs 12 dollars and arrives the next business day.', R, 'Both parts answered.'),
   ('Express shipping arrives the next business day.', P, 'Speed only; the price is missing.'),
   ('It costs 12 dollars.', P, 'Price only.'),
   ('Standard shipping is free and takes 3 to 5 business days.', I, 'About standard shipping, the neighbouring option.'),
   ('Shipping options are shown at checkout.', I, 'An evasion.'),
  ], [
   ('Express delivery: 12 dollars, next business day for orders placed before 2 pm.', Y, 'Answers both parts.'),
   ('Standard delivery is free and takes 3 to 5 business days.', N, 'The neighbouring option.'),
   ('Orders placed on weekends are dispatched on Monday.', Y, 'Affects how fast express arrives.'),
   ('Our packaging is made from recycled cardboard.', N, 'Unrelated.'),
  ]),
 ('international-shipping', 'shipping', 'Do you ship to Canada?', [
   ('Yes, we ship to Canada; delivery takes 7 to 10 days.', R, 'Answers it.'),
   ('No, we only ship within the United States.', R, 'A clear answer, even if it is no.'),
   ('We ship to all 50 US states, including Alaska and Hawaii.', I, 'Implies nothing certain about Canada: does not answer.'),
   ('Great question! Shipping is one of our favourite topics.', I, 'Says nothing.'),
  ], [
   ('We deliver to the United States and Canada. Canadian orders take 7 to 10 business days.', Y, 'Answers it.'),
   ('Customs duties for international orders are paid by the recipient.', Y, 'Says international orders exist and what they cost.'),
   ('Orders to Alaska and Hawaii may take two extra days.', N, 'US states, not Canada.'),
   ('You can track your parcel with the link in your confirmation email.', N, 'Tracking, not destinations.'),
  ]),
 ('dental-basic', 'insurance', 'Does the Basic plan cover dental check-ups?', [
   ('No, dental care is not included in the Basic plan.', R, 'Direct answer.'),
   ('The Premium plan includes two dental check-ups a year.', I, 'About Premium, the neighbouring plan: does not say what Basic covers.'),
   ('The Basic plan covers hospital stays up to 30 days a year, but dental care is not part of it.', R, 'Answers, with extra material.'),
   ('Dental check-ups are important for your health.', I, 'On the topic, but no answer.'),
   ('Yes, once a year.', R, 'Possibly wrong, but answers.'),
  ], [
   ('The Basic plan covers hospital stays up to 30 days per year. Dental care is not included in the Basic plan.', Y, 'Answers it.'),
   ('The Premium plan includes dental check-ups twice a year.', N, 'The neighbouring plan; it does not say what Basic covers.'),
   ('Claims must be submitted within 90 days of treatment.', N, 'Claims, not coverage.'),
   ('A dental add-on can be bought with any plan for 9 euros a month.', Y, 'Tells a Basic member how to get dental cover.'),
  ]),
 ('claim-deadline', 'insurance', 'How long after treatment can I submit a claim?', [
   ('Claims must be submitted within 90 days of the treatment date.', R, 'Direct answer.'),
   ('You should keep your itemised invoice.', I, 'Advice about claims, not the deadline.'),
   ('Within six months.', R, 'Wrong, but answers.'),
   ('Claims submitted late are rejected unless a hospital stay caused the delay.', P, 'Says what happens when late, not what the deadline is.'),
  ], [
   ('Claims must be submitted within 90 days of the treatment date, with an itemised invoice.', Y, 'Answers it.'),
   ('Claims submitted later are rejected unless the delay was caused by a hospital stay.', Y, 'An exception to the deadline.'),
   ('The Premium plan pays 90% of outpatient costs after a 250 euro deductible.', N, 'Cover, not deadlines.'),
   ('Our offices are closed on public holidays.', N, 'Unrelated.'),
  ]),
 ('overdraft-fee', 'banking', 'What is the fee for an unarranged overdraft?', [
   ('An unarranged overdraft costs 5 pounds a day, up to 25 pounds a month.', R, 'Direct answer.'),
   ('An arranged overdraft has an interest rate of 19.9% a year.', I, 'The arranged overdraft, a neighbouring product.'),
   ('It costs 5 pounds a day.', R, 'Answers it; the monthly cap is left out.'),
   ('Please avoid going overdrawn.', I, 'Advice, no answer.'),
  ], [
   ('Unarranged overdrafts are charged 5 pounds per day, capped at 25 pounds per month.', Y, 'Answers it.'),
   ('Arranged overdrafts cost 19.9% EAR with no daily fee.', N, 'The neighbouring product.'),
   ('You can apply for an arranged overdraft in the app.', N, 'How to avoid the fee, not what it is.'),
   ('Card payments abroad cost 2.75% of the amount.', N, 'Another fee.'),
  ]),
 ('card-lost', 'banking', 'What should I do if I lose my debit card?', [
   ('Freeze the card in the app straight away and order a replacement; it arrives in 3 to 5 days.', R, 'Answers it.'),
   ('Replacement cards arrive in 3 to 5 working days.', P, 'Part of it: what to do first is missing.'),
   ('Debit cards can be used at any ATM displaying the Visa logo.', I, 'About card use.'),
   ('Losing a card is stressful; we are here for you.', I, 'No answer.'),
   ('Call us on 0800 123 456 and we will cancel it.', R, 'A different procedure, but it answers.'),
  ], [
   ('If your card is lost or stolen, freeze it in the app and request a replacement.', Y, 'Answers it.'),
   ('Replacement cards are sent to your home address within 3 to 5 working days.', Y, 'Part of what to expect.'),
   ('Contactless payments are limited to 100 pounds per transaction.', N, 'Card use, not loss.'),
   ('Savings accounts pay 3.1% interest.', N, 'Unrelated.'),
  ]),
 ('annual-leave', 'hr', 'How many days of paid annual leave do full-time employees get?', [
   ('Full-time employees get 25 days of paid leave a year, plus public holidays.', R, 'Direct answer.'),
   ('Part-time employees get leave in proportion to their hours.', I, 'About part-time staff, the neighbouring group.'),
   ('Up to 5 unused days can be carried over.', I, 'Carry-over, not the entitlement.'),
   ('Twenty days.', R, 'Wrong, but answers.'),
  ], [
   ('Full-time employees receive 25 days of paid annual leave, plus public holidays.', Y, 'Answers it.'),
   ('Part-time employees receive leave pro rata to their contracted hours.', N, 'Not full-time staff.'),
   ('Up to 5 unused days may be carried over to the next year.', N, 'Carry-over, not the entitlement.'),
   ('After five years of service, employees receive two extra days of leave.', Y, 'Changes the entitlement for some full-time staff.'),
  ]),
 ('sick-note', 'hr', 'When do I need a doctor\'s note for sick leave?', [
   ('You need a doctor\'s note from the fourth day of sickness.', R, 'Direct answer.'),
   ('Sick pay is 80% of salary for up to six weeks.', I, 'Sick pay, not the note.'),
   ('Tell your manager before 9 am on the first day, and bring a doctor\'s note from day four.', R, 'Answers with more.'),
   ('Please follow the sickness policy.', I, 'Evasion.'),
  ], [
   ('A medical certificate is required from the fourth calendar day of absence.', Y, 'Answers it.'),
   ('Report sickness to your line manager before 9 am on the first day.', N, 'The reporting rule; it does not say when a note is needed.'),
   ('Statutory sick pay starts on the fourth day of absence.', N, 'Sick pay; shares "fourth day" but not the note.'),
   ('The staff canteen opens at 8 am.', N, 'Unrelated.'),
  ]),
 ('password-reset', 'software', 'How do I reset my password?', [
   ('Click "Forgot password" on the sign-in page and follow the link we email you.', R, 'Answers it.'),
   ('Passwords must be at least 12 characters long.', I, 'Password rules, not the reset.'),
   ('Go to Settings, then Security, then Change password.', R, 'Changing while signed in: an answer, if not for a forgotten password.'),
   ('We take security very seriously.', I, 'Nothing.'),
  ], [
   ('To reset a forgotten password, choose "Forgot password" on the sign-in page; a reset link is emailed to you.', Y, 'Answers it.'),
   ('Reset links expire after 30 minutes.', Y, 'Part of the reset process.'),
   ('Passwords must be at least 12 characters and contain a number.', N, 'Rules, not the reset.'),
   ('Two-factor authentication can be enabled in the Security settings.', N, 'Another security feature.'),
  ]),
 ('export-data', 'software', 'Can I export my projects as CSV?', [
   ('Yes, open a project and choose Export, then CSV.', R, 'Answers it.'),
   ('Projects can be exported as PDF.', I, 'PDF, not CSV: does not say whether CSV is possible.'),
   ('CSV export is available on the Team plan only.', R, 'A conditional answer.'),
   ('Exporting is a great way to back up your work.', I, 'No answer.'),
  ], [
   ('Projects can be exported as CSV or PDF from the Export menu.', Y, 'Answers it.'),
   ('CSV export is included in the Team and Enterprise plans.', Y, 'Who can export.'),
   ('Projects can be shared with up to 10 collaborators.', N, 'Sharing, not exporting.'),
   ('Imported CSV files must use UTF-8 encoding.', N, 'Import, the neighbouring feature.'),
  ]),
 ('checked-bag', 'travel', 'How heavy can my checked bag be?', [
   ('Checked bags can weigh up to 23 kg.', R, 'Direct answer.'),
   ('Your cabin bag can weigh up to 8 kg.', I, 'The cabin bag, the neighbouring allowance.'),
   ('Up to 23 kg in economy and 32 kg in business class.', R, 'Answers with detail.'),
   ('Please check our baggage page.', I, 'Evasion.'),
  ], [
   ('Each checked bag may weigh up to 23 kg in economy.', Y, 'Answers it.'),
   ('Cabin bags must not exceed 8 kg and 55 x 40 x 20 cm.', N, 'Cabin bags.'),
   ('Overweight bags up to 32 kg are accepted for a fee of 60 euros.', Y, 'What happens above the limit.'),
   ('Boarding closes 20 minutes before departure.', N, 'Unrelated.'),
  ]),
 ('flight-cancel', 'travel', 'What compensation do I get if my flight is cancelled less than two weeks before departure?', [
   ('You can get up to 600 euros depending on the flight distance, plus a refund or rebooking.', R, 'Answers it.'),
   ('You can choose a refund or rebooking.', P, 'Part of it: the compensation amount is missing.'),
   ('If your flight is delayed more than three hours you may get compensation.', I, 'Delays, not cancellations.'),
   ('Cancellations are rare on our airline.', I, 'No answer.'),
   ('Nothing, cancellations are never compensated.', R, 'Wrong, but answers.'),
  ], [
   ('For cancellations notified less than 14 days before departure, passengers are entitled to 250 to 600 euros, depending on distance.', Y, 'Answers it.'),
   ('Passengers may choose between a full refund and rebooking on the next available flight.', Y, 'Part of the remedy.'),
   ('Delays of more than three hours at arrival give the same compensation as cancellations.', N, 'Delays; it points to cancellations but states no amount.'),
   ('Meals are served on flights longer than two hours.', N, 'Unrelated.'),
  ]),
 ('dose-max', 'pharmacy', 'What is the maximum daily dose of paracetamol for an adult?', [
   ('Adults should not take more than 4 g of paracetamol in 24 hours.', R, 'Direct answer.'),
   ('Take one or two 500 mg tablets every four to six hours.', P, 'How to take it, not the daily maximum (a reader could work it out only partly).'),
   ('Children under 12 should take children\'s paracetamol.', I, 'Children, not adults.'),
   ('Ask your pharmacist.', I, 'Evasion.'),
  ], [
   ('Adults: 500 mg to 1 g every 4 to 6 hours, no more than 4 g in 24 hours.', Y, 'Answers it.'),
   ('Do not take paracetamol with other products that contain paracetamol.', Y, 'Bears on how much one takes in total.'),
   ('Ibuprofen should be taken with food.', N, 'Another medicine.'),
   ('Store below 25 degrees Celsius.', N, 'Storage.'),
  ]),
 ('prescription-renewal', 'pharmacy', 'How do I renew a repeat prescription?', [
   ('Request it in the app or at the pharmacy counter; it is ready in two working days.', R, 'Answers it.'),
   ('Repeat prescriptions are free for people over 60.', I, 'Cost, not how to renew.'),
   ('It takes two working days.', P, 'How long, not how.'),
   ('Prescriptions help you get the medicine you need.', I, 'Nothing.'),
  ], [
   ('Repeat prescriptions can be ordered in the app or at the counter and are ready within two working days.', Y, 'Answers it.'),
   ('Your doctor must review repeat prescriptions once a year.', Y, 'A condition of renewing.'),
   ('Prescription charges do not apply to people aged 60 and over.', N, 'Charges.'),
   ('Flu vaccinations are available from October.', N, 'Unrelated.'),
  ]),
 ('meter-reading', 'energy', 'How do I submit a meter reading?', [
   ('Enter it in your online account under Meter readings, or call our automated line.', R, 'Answers it.'),
   ('Smart meters send readings automatically.', R, 'An answer for smart meter owners: nothing to do.'),
   ('Your bill is based on estimated readings if you do not send one.', I, 'What happens otherwise, not how.'),
   ('Energy prices change on 1 April.', I, 'Unrelated.'),
  ], [
   ('Submit readings in your online account under "Meter readings" or by phone on our automated line.', Y, 'Answers it.'),
   ('Smart meters send readings automatically every 30 minutes.', Y, 'Tells smart meter owners they need not.'),
   ('If no reading is received, your bill is estimated.', N, 'Consequence, not how.'),
   ('Our green tariff uses 100% renewable electricity.', N, 'Unrelated.'),
  ]),
 ('tariff-exit', 'energy', 'Is there a fee to leave my fixed tariff early?', [
   ('Yes, 50 pounds per fuel if you leave more than 49 days before the end.', R, 'Answers it.'),
   ('There is no exit fee on the variable tariff.', I, 'The neighbouring tariff; says nothing about the fixed one.'),
   ('No.', R, 'Possibly wrong, but answers.'),
   ('You can switch tariffs at any time in your account.', I, 'Does not say whether a fee applies.'),
  ], [
   ('Fixed tariffs carry an exit fee of 50 pounds per fuel, unless you leave in the last 49 days.', Y, 'Answers it.'),
   ('Variable tariffs have no exit fees.', N, 'The neighbouring tariff.'),
   ('Fixed prices are guaranteed for 12 months.', N, 'Shares "fixed" but not about leaving.'),
   ('You can switch to another supplier in five working days.', N, 'Switching speed, not fees.'),
  ]),
 ('roaming', 'telecom', 'Can I use my phone plan in the EU at no extra cost?', [
   ('Yes, roaming in the EU is included in all our plans.', R, 'Answers it.'),
   ('Calls to the United States cost 1 euro a minute.', I, 'Another region.'),
   ('EU roaming is included, but fair-use limits apply above 20 GB.', R, 'Answers with a condition.'),
   ('Travel safely!', I, 'Nothing.'),
  ], [
   ('All plans include roaming in the EU at no extra cost, with a fair-use limit of 20 GB.', Y, 'Answers it.'),
   ('Roaming in Switzerland and the UK costs 5 euros a day.', N, 'Outside the EU; it does not say what EU roaming costs.'),
   ('Calls to numbers outside the EU are charged at international rates.', N, 'Calling abroad from home, not roaming.'),
   ('Unused data rolls over for one month.', N, 'Unrelated.'),
  ]),
 ('contract-cancel', 'telecom', 'How much notice do I need to give to cancel my contract?', [
   ('You need to give 30 days\' notice.', R, 'Direct answer.'),
   ('Contracts renew automatically every 12 months.', I, 'Renewal, not notice.'),
   ('30 days, in writing or in the app; the minimum term still applies.', R, 'Answers with more.'),
   ('We are sorry to see you go!', I, 'Nothing.'),
  ], [
   ('Contracts can be cancelled with 30 days\' notice after the minimum term.', Y, 'Answers it.'),
   ('The minimum term is 24 months for plans with a phone.', Y, 'Bears on when notice can end the contract.'),
   ('Upgrades are available from month 18.', N, 'Upgrades.'),
   ('Our shops offer free screen protectors.', N, 'Unrelated.'),
  ]),
 ('deposit-return', 'tenancy', 'When will my deposit be returned after I move out?', [
   ('Within 10 days of the end of the tenancy.', R, 'Direct answer.'),
   ('The deposit equals one month\'s rent.', I, 'The amount, not the timing.'),
   ('After the final inspection, which is usually in the last week of the tenancy.', P, 'A step before the return, not when it comes.'),
   ('Within two months.', R, 'Wrong, but answers.'),
  ], [
   ('The deposit is returned within 10 days of the end of the tenancy, minus any damage.', Y, 'Answers it.'),
   ('The deposit equals one month\'s rent.', N, 'The amount.'),
   ('Tenants must give two months\' written notice.', N, 'Notice.'),
   ('Deductions are itemised in writing at the final inspection.', Y, 'How much of it comes back and after what.'),
  ]),
 ('pets', 'tenancy', 'Am I allowed to keep a cat in the flat?', [
   ('Yes, cats are allowed with the landlord\'s written consent.', R, 'Answers it.'),
   ('Dogs are not allowed in the building.', I, 'Dogs: says nothing about cats.'),
   ('No pets of any kind are allowed.', R, 'A clear answer.'),
   ('Please read your tenancy agreement.', I, 'Evasion.'),
  ], [
   ('Cats and small caged animals may be kept with the landlord\'s written consent.', Y, 'Answers it.'),
   ('Dogs are not permitted in the building.', N, 'Dogs.'),
   ('Tenants are responsible for damage caused by their pets.', Y, 'A rule for pet owners, so it bears on keeping a cat.'),
   ('Bins are collected on Tuesdays.', N, 'Unrelated.'),
  ]),
 ('course-fee', 'education', 'How much is the tuition for the part-time MSc?', [
   ('The part-time MSc costs 6,000 pounds a year for two years.', R, 'Direct answer.'),
   ('The full-time MSc costs 11,000 pounds.', I, 'The full-time course, the neighbouring option.'),
   ('12,000 pounds in total, paid in two yearly instalments.', R, 'Answers (the same amount put another way).'),
   ('Scholarships are available.', I, 'Funding, not the fee.'),
  ], [
   ('Part-time MSc: 6,000 pounds per year over two years.', Y, 'Answers it.'),
   ('Full-time MSc: 11,000 pounds for one year.', N, 'The other course.'),
   ('Fees can be paid in two instalments, in October and February.', Y, 'How the fee is paid.'),
   ('The library is open 24 hours during exams.', N, 'Unrelated.'),
  ]),
 ('exam-resit', 'education', 'Can I resit an exam I failed?', [
   ('Yes, once, in the August resit period; the mark is capped at 40%.', R, 'Answers it.'),
   ('Exams take place in May and June.', I, 'Timing of first exams, not resits.'),
   ('Yes.', R, 'Answers, briefly.'),
   ('Failing an exam can be disappointing.', I, 'Nothing.'),
  ], [
   ('Students may resit a failed exam once, in the August resit period.', Y, 'Answers it.'),
   ('Resit marks are capped at the pass mark of 40%.', Y, 'A rule of resits.'),
   ('The main exam period runs from May to June.', N, 'First attempts.'),
   ('Coursework must be submitted by 5 pm on the due date.', N, 'Coursework.'),
  ]),
 ('gym-freeze', 'fitness', 'Can I freeze my gym membership?', [
   ('Yes, for up to three months a year, for 5 pounds a month.', R, 'Answers it.'),
   ('You can cancel with one month\'s notice.', I, 'Cancelling, the neighbouring option.'),
   ('Freezing is only possible on the annual plan.', R, 'A conditional answer.'),
   ('Our gym has over 200 machines.', I, 'Nothing.'),
  ], [
   ('Memberships can be frozen for up to three months per year at 5 pounds per month.', Y, 'Answers it.'),
   ('Annual members may freeze at no cost for medical reasons.', Y, 'A case of freezing.'),
   ('Memberships can be cancelled with one month\'s notice.', N, 'Cancelling.'),
   ('Classes can be booked seven days in advance.', N, 'Unrelated.'),
  ]),
 ('car-deposit', 'car rental', 'How much is the security deposit when I rent a car?', [
   ('A deposit of 300 euros is held on your credit card.', R, 'Direct answer.'),
   ('Drivers must be at least 21 years old.', I, 'Age, not deposit.'),
   ('300 euros, or 1,000 euros for premium cars.', R, 'Answers with detail.'),
   ('The deposit is released when you return the car.', P, 'When it comes back, not how much.'),
  ], [
   ('A security deposit of 300 euros is blocked on the driver\'s credit card at pick-up.', Y, 'Answers it.'),
   ('Premium and sports cars require a deposit of 1,000 euros.', Y, 'The deposit for some cars.'),
   ('The deposit is released within 7 days of return.', N, 'Timing; says nothing of the amount. (Hard: a person could call it helpful.)'),
   ('Drivers under 25 pay a young driver fee of 15 euros a day.', N, 'A fee, not the deposit.'),
  ]),
 ('car-fuel', 'car rental', 'Do I need to return the car with a full tank?', [
   ('Yes, return it full or pay 3 euros a litre for what is missing.', R, 'Answers it.'),
   ('Electric cars must be returned with at least 70% charge.', I, 'Electric cars, the neighbouring rule.'),
   ('No, you can prepay a full tank at pick-up and return it empty.', R, 'Answers (an option).'),
   ('Fuel prices vary by country.', I, 'Nothing.'),
  ], [
   ('Cars are provided with a full tank and must be returned full; missing fuel is charged at 3 euros per litre.', Y, 'Answers it.'),
   ('A prepaid fuel option lets you return the car with any level.', Y, 'An alternative.'),
   ('Electric vehicles must be returned with at least 70% battery.', N, 'Electric cars.'),
   ('Snow chains are available in winter for 10 euros a day.', N, 'Unrelated.'),
  ]),
 ('library-loan', 'library', 'How many books can I borrow at once?', [
   ('You can borrow up to 12 books at a time.', R, 'Direct answer.'),
   ('Loans last three weeks.', I, 'Duration, not the number.'),
   ('Twelve books, and up to four DVDs.', R, 'Answers with more.'),
   ('Reading is good for you.', I, 'Nothing.'),
  ], [
   ('Members may borrow up to 12 items at once, of which no more than 4 may be DVDs.', Y, 'Answers it.'),
   ('The loan period is three weeks and can be renewed twice.', N, 'Duration.'),
   ('Children\'s cards allow 6 books at a time.', Y, 'The limit for children.'),
   ('Late returns cost 20 pence per day.', N, 'Fines.'),
  ]),
 ('library-fine', 'library', 'What is the fine for a late book, and is there a maximum?', [
   ('20 pence a day, up to 5 pounds per item.', R, 'Both parts answered.'),
   ('It is 20 pence a day.', P, 'The daily fine only; the maximum is missing.'),
   ('The maximum is 5 pounds.', P, 'The cap only.'),
   ('You can renew books online.', I, 'Renewing, not fines.'),
  ], [
   ('Overdue items are charged 20 pence per day, to a maximum of 5 pounds per item.', Y, 'Answers it.'),
   ('Children\'s books carry no late fees.', Y, 'An exception.'),
   ('Books can be renewed twice online.', N, 'Renewing.'),
   ('The library closes at 8 pm on Thursdays.', N, 'Unrelated.'),
  ]),
 ('warranty-length', 'electronics', 'How long is the warranty on the X200 headphones?', [
   ('The X200 comes with a two-year warranty.', R, 'Direct answer.'),
   ('The X100 has a one-year warranty.', I, 'The neighbouring product.'),
   ('Two years, extendable to three if you register the product.', R, 'Answers with detail.'),
   ('Our headphones are built to last.', I, 'Nothing.'),
  ], [
   ('X200 wireless headphones: two-year manufacturer warranty.', Y, 'Answers it.'),
   ('X100 headphones are covered for one year.', N, 'The other model.'),
   ('Registering your product online adds one year to the warranty.', Y, 'Changes the X200 warranty.'),
   ('Batteries are covered for six months.', Y, 'Part of the warranty (hard: batteries may be excluded).'),
  ]),
 ('charging-time', 'electronics', 'How long does the X200 take to charge fully?', [
   ('About two hours for a full charge.', R, 'Direct answer.'),
   ('Ten minutes of charging gives three hours of playback.', P, 'A quick charge figure, not the full charge time.'),
   ('The battery lasts 30 hours.', I, 'Battery life, not charging time.'),
   ('Use the USB-C cable in the box.', I, 'How, not how long.'),
  ], [
   ('A full charge takes about 2 hours with a 5 V USB-C charger.', Y, 'Answers it.'),
   ('A 10-minute charge gives up to 3 hours of playback.', Y, 'Charging speed.'),
   ('Battery life is up to 30 hours with noise cancelling off.', N, 'Battery life.'),
   ('The headphones weigh 250 g.', N, 'Unrelated.'),
  ]),
]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests')
    answers = {'dev': [], 'test': []}
    passages = {'dev': [], 'test': []}
    order = sorted(ITEMS, key=lambda item: hashlib.sha256(item[0].encode()).hexdigest())
    halves = {item[0]: ('dev', 'test')[i % 2] for i, item in enumerate(order)}
    for qid, area, question, responses, docs in ITEMS:
        half = halves[qid]
        for i, (text, label, note) in enumerate(responses, 1):
            answers[half].append({'id': f'{qid}-a{i}', 'area': area, 'query': question,
                                  'response': text, 'label': label, 'note': note})
        for i, (text, label, note) in enumerate(docs, 1):
            passages[half].append({'id': f'{qid}-p{i}', 'area': area, 'query': question,
                                   'passage': text, 'label': label, 'note': note})
    for name, sets in (('labelled_relevance', answers), ('labelled_passages', passages)):
        for half, items in sets.items():
            folder = os.path.join(root, name, half)
            os.makedirs(folder, exist_ok=True)
            file = 'answers.jsonl' if name == 'labelled_relevance' else 'passages.jsonl'
            with open(os.path.join(folder, file), 'w', encoding='utf-8') as f:
                for x in items:
                    f.write(json.dumps(x, ensure_ascii=False) + '\n')
            print(name, half, len(items))


if __name__ == '__main__':
    main()
